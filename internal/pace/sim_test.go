package pace

import (
	"container/heap"
	"context"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/ratelimit"
)

// This file simulates a plan in virtual time: Terraform's walkers taking
// reads through a Pacer, a network between them and the service, and a
// limiter in front of the service, modelled on ones real services run.

// limiter is what stands in front of the service.
type limiter interface {
	// admit counts a request arriving at at: accepted, or refused with the
	// Retry-After it would send (0: none). An accepted one stays in
	// flight until finish.
	admit(at time.Time) (ok bool, retryAfter time.Duration, quota http.Header)
	finish(at time.Time)
}

// bucket is a token bucket (nginx's limit_req with burst and nodelay, most
// API gateways), with no pacer of ours in it. A burst of one is a leaky
// bucket with no burst (limit_req without one).
type bucket struct{ *ratelimit.Bucket }

func newBucket(r float64, burst int) *bucket { return &bucket{ratelimit.NewBucket(r, burst)} }

func (b *bucket) admit(at time.Time) (bool, time.Duration, http.Header) {
	return refusal(b.Take(at))
}
func (*bucket) finish(time.Time) {}

// refusal is an admission from a limiter's wait and verdict.
func refusal(wait time.Duration, ok bool) (bool, time.Duration, http.Header) {
	if !ok {
		return false, ratelimit.RetryAfter(wait), nil
	}
	return true, 0, nil
}

// queued is nginx's limit_req without nodelay (ratelimit.Queued): a
// request sooner than the rate waits in nginx, and reaches the service at
// the rate; one that finds burst waiting is refused, with no Retry-After.
type queued struct{ *ratelimit.Queued }

func newQueued(r float64, burst int) *queued { return &queued{ratelimit.NewQueued(r, burst)} }

func (q *queued) admit(at time.Time) (bool, time.Duration, http.Header) {
	ok, _ := q.admitAfter(at)
	return ok, 0, nil
}

// admitAfter is admit with the time an accepted request waits in nginx.
func (q *queued) admitAfter(at time.Time) (bool, time.Duration) {
	delay, ok := q.Take(at)
	return ok, delay
}
func (*queued) finish(time.Time) {}

// fixedWindow accepts n requests per wall-clock second, and says when the
// next second begins.
type fixedWindow struct {
	n int
	w ratelimit.FixedWindow
}

func (w *fixedWindow) admit(at time.Time) (bool, time.Duration, http.Header) {
	return refusal(w.w.Take(at, w.n))
}
func (*fixedWindow) finish(time.Time) {}

// rollingWindow accepts n requests in any second, counting those it
// refuses too when countRefused, as HAProxy's stick-table request rate does
// (sc_http_req_rate counts every request tracked).
type rollingWindow struct {
	n            int
	countRefused bool
	w            ratelimit.RollingWindow
}

func (w *rollingWindow) admit(at time.Time) (bool, time.Duration, http.Header) {
	return refusal(w.w.Take(at, w.n, w.countRefused))
}
func (*rollingWindow) finish(time.Time) {}

// periodRate is HAProxy's request rate over a second, refusals counted
// (ratelimit.PeriodRate), refusing over n.
type periodRate struct {
	n int
	r ratelimit.PeriodRate
}

func (p *periodRate) admit(at time.Time) (bool, time.Duration, http.Header) {
	return refusal(p.r.Take(at, p.n, time.Second))
}
func (*periodRate) finish(time.Time) {}

// inFlight refuses a request that arrives with n others in flight.
type inFlight struct {
	n int
	l ratelimit.InFlight
}

func (l *inFlight) admit(time.Time) (bool, time.Duration, http.Header) {
	if !l.l.Enter(l.n) {
		return false, time.Second, nil
	}
	return true, 0, nil
}
func (l *inFlight) finish(time.Time) { l.l.Leave() }

// stepped is a bucket whose rate changes by factor at a time into the
// plan: halved, as a service under load sheds; doubled, as a limit shared
// with others frees their share when they stop.
type stepped struct {
	*bucket
	after  time.Duration
	factor float64
	first  time.Time
	done   bool
}

func (s *stepped) admit(at time.Time) (bool, time.Duration, http.Header) {
	if s.first.IsZero() {
		s.first = at
	}
	if !s.done && at.Sub(s.first) >= s.after {
		s.SetRate(at, s.Rate()*s.factor)
		s.done = true
	}
	return s.bucket.admit(at)
}

// announcing is a quota service (gate_test.go's) as a limiter.
type announcing struct{ s *quotaService }

func (a *announcing) admit(at time.Time) (bool, time.Duration, http.Header) {
	ok, h := a.s.answer(at)
	if ok {
		return true, 0, h
	}
	q, _ := Announced(h, at)
	return false, ratelimit.RetryAfter(q.Reset.Sub(at)), h
}
func (*announcing) finish(time.Time) {}

// silent is a limiter that sends no Retry-After, as nginx's limit_req,
// HAProxy's deny and many API gateways refuse.
type silent struct{ limiter }

func (s silent) admit(at time.Time) (bool, time.Duration, http.Header) {
	ok, _, quota := s.limiter.admit(at)
	return ok, 0, quota
}

// network is the round trip between the provider and the service: half of
// rtt each way, and up to jitter more at random each way; and the service's
// work, up to work at random.
type network struct{ rtt, jitter, work time.Duration }

// simPlan is a plan's outcome.
type simPlan struct {
	took              time.Duration
	requests, refused int
}

// ratio is the plan's time against the ideal.
func (s simPlan) ratio(ideal time.Duration) float64 { return float64(s.took) / float64(ideal) }

// share is the share of requests refused, in percent.
func (s simPlan) share() float64 { return 100 * float64(s.refused) / float64(s.requests) }

// simulate runs a plan as Terraform takes it, in virtual time: one list
// read, some 100 ms for Terraform to expand its for_each (so a rate
// measured over the start still holds the list), then reads taken by ten
// walkers, each pausing 20 to 150 ms between reads (some 115 a second
// offered, as Terraform 1.11 plans them on a 2-core machine), all through
// one Pacer (nil: none, no more than told at once) with the provider's
// defaults, in front of lim (nil: none). A refused read is tried again
// as the client does: after its Retry-After, or at once through the pacer.
func simulate(seed uint64, reads int, lim limiter, net network, p func(Clock) *Pacer, told int) simPlan {
	return simulateFleet(seed, 1, reads, lim, net, 0, p, told)[0]
}

// simPacer is what a simulated plan asks of its pacer: a Pacer, or a
// model to judge it against (baseline_test.go).
type simPacer interface {
	askOK(ctx context.Context, now time.Time) (Ticket, time.Duration, bool)
	Done(Ticket, Answer)
	Release(Ticket)
	pollAfter(time.Duration) time.Duration
	answersWake() bool
	sharesPace() bool
}

// sharesPace tells a Pacer given a Shared store.
func (p *Pacer) sharesPace() bool { return p.shared != nil }

// simulateOf is simulate with any simPacer.
func simulateOf(seed uint64, reads int, lim limiter, net network, p func(Clock) simPacer) simPlan {
	return simulateFleetOf(seed, 1, reads, lim, net, 0, p, 0)[0]
}

// simulateFleet runs plans such plans at once, as separate processes on
// one machine would: each with its Pacer, whose waiters only its own
// answers wake, started within launch of the first, in front of one
// limiter.
func simulateFleet(seed uint64, plans, reads int, lim limiter, net network, launch time.Duration, p func(Clock) *Pacer, told int) []simPlan {
	var of func(Clock) simPacer
	if p != nil {
		of = func(c Clock) simPacer { return p(c) }
	}
	return simulateFleetOf(seed, plans, reads, lim, net, launch, of, told)
}

// simulateFleetOf is simulateFleet with any simPacer.
func simulateFleetOf(seed uint64, plans, reads int, lim limiter, net network, launch time.Duration, p func(Clock) simPacer, told int) []simPlan {
	rng := rand.New(rand.NewPCG(seed, 1))
	start := time.Unix(1_800_000_000, 0).Add(time.Duration(rng.Int64N(int64(time.Second))))
	s := &sim{now: start, rng: rng, lim: lim, net: net}
	fleet := make([]*process, plans)
	for i := range fleet {
		pl := &process{id: i, told: told, start: start}
		if i > 0 {
			pl.start = start.Add(time.Duration(rng.Int64N(int64(launch))))
		}
		if p != nil {
			pl.pacer = p(s)
		}
		fleet[i] = pl
		s.at(pl.start, func() { s.runPlan(pl, reads) })
	}
	s.run()
	out := make([]simPlan, plans)
	for i, pl := range fleet {
		out[i] = simPlan{took: pl.ended.Sub(pl.start), requests: pl.requests, refused: pl.refused}
	}
	return out
}

// runPlan starts pl: its list read, then its walkers.
func (s *sim) runPlan(pl *process, reads int) {
	next := 0
	var read func(w *walker)
	read = func(w *walker) {
		if next >= reads {
			return
		}
		next++
		s.attempt(w, func() {
			pl.ended = s.now
			s.after(20*time.Millisecond+time.Duration(s.rng.Int64N(int64(130*time.Millisecond))), func() { read(w) })
		})
	}
	s.attempt(&walker{id: 0, plan: pl}, func() {
		s.after(80*time.Millisecond+time.Duration(s.rng.Int64N(int64(40*time.Millisecond))), func() {
			for i := range 10 {
				read(&walker{id: 1 + i, plan: pl})
			}
		})
	})
}

// walker is one of Terraform's walkers; id orders the walkers woken at
// once, so that a seed fixes the whole plan.
type walker struct {
	id, gen int
	plan    *process
}

// process is one Terraform process's share of a simulation.
type process struct {
	id                int
	pacer             simPacer
	told, busy        int
	waiting           map[*walker]func()
	asker             *walker  // a shared Pacer's: the walker whose turn it is to ask
	queue             []func() // and those waiting for their turn
	start, ended      time.Time
	requests, refused int
}

type sim struct {
	now    time.Time
	rng    *rand.Rand
	lim    limiter
	net    network
	events events
	seq    int
}

func (s *sim) Now() time.Time                       { return s.now }
func (s *sim) After(time.Duration) <-chan time.Time { return nil }

func (s *sim) after(d time.Duration, f func()) { s.at(s.now.Add(d), f) }

func (s *sim) at(t time.Time, f func()) {
	s.seq++
	heap.Push(&s.events, event{at: t, seq: s.seq, f: f})
}

func (s *sim) run() {
	for s.events.Len() > 0 {
		e, _ := heap.Pop(&s.events).(event)
		s.now = e.at
		e.f()
	}
}

func (s *sim) oneWay() time.Duration {
	d := s.net.rtt / 2
	if s.net.jitter > 0 {
		d += time.Duration(s.rng.Int64N(int64(s.net.jitter)))
	}
	return d
}

// wait has w ask again at its plan's next answer (wake), or when the
// returned function is called, whichever comes first; only once either way.
func (s *sim) wait(w *walker, ask func()) func() {
	w.gen++
	gen := w.gen
	pl := w.plan
	again := func() {
		if w.gen == gen {
			w.gen++
			delete(pl.waiting, w)
			ask()
		}
	}
	if pl.waiting == nil {
		pl.waiting = map[*walker]func(){}
	}
	pl.waiting[w] = again
	return again
}

// attempt asks the pacer to let w's request go, sends it, and on its
// answer calls done, or tries again.
func (s *sim) attempt(w *walker, done func()) {
	pl := w.plan
	var t Ticket
	if pl.pacer != nil {
		if pl.asker != nil && pl.asker != w && pl.pacer.sharesPace() {
			// A shared Pacer's waiters take turns at asking (Wait).
			pl.queue = append(pl.queue, func() { s.attempt(w, done) })
			return
		}
		var wait time.Duration
		var ok bool
		t, wait, ok = pl.pacer.askOK(context.Background(), s.now)
		if !ok {
			pl.asker = w
			wait = pl.pacer.pollAfter(wait)
			if !pl.pacer.answersWake() {
				s.after(wait, func() { s.attempt(w, done) })
				return
			}
			again := s.wait(w, func() { s.attempt(w, done) })
			if wait != untilAnswered {
				s.after(wait, again)
			}
			return
		}
		if pl.asker == w {
			pl.asker = nil
			if len(pl.queue) > 0 {
				s.after(0, pl.queue[0])
				pl.queue = pl.queue[1:]
			}
		}
	} else if pl.told > 0 {
		if pl.busy >= pl.told {
			s.wait(w, func() { s.attempt(w, done) })
			return
		}
		pl.busy++
	}
	pl.requests++
	// A request let go before its token goes at its token's time (Wait).
	s.after(max(t.sent.Sub(s.now), 0)+s.oneWay(), func() {
		ok, wait, quota, delay := true, time.Duration(0), http.Header(nil), time.Duration(0)
		if q, isQueue := s.lim.(*queued); isQueue {
			ok, delay = q.admitAfter(s.now)
		} else if s.lim != nil {
			ok, wait, quota = s.lim.admit(s.now)
		}
		work := delay
		if ok && s.net.work > 0 {
			work += time.Duration(s.rng.Int64N(int64(s.net.work)))
		}
		s.after(work, func() {
			if ok && s.lim != nil {
				s.lim.finish(s.now)
			}
			s.after(s.oneWay(), func() {
				if pl.pacer != nil {
					pl.pacer.Done(t, Answer{Refused: !ok, RetryAfter: wait, Quota: quota})
					pl.pacer.Release(t)
				} else if pl.told > 0 {
					pl.busy--
				}
				s.wake(pl)
				if ok {
					done()
					return
				}
				pl.refused++
				// The client's retry model (internal/client, retry.go): a
				// Retry-After is waited for (the limiters here send whole
				// seconds, so min_wait's 1 s holds it no longer); without
				// one, the read asks the pacer again at once.
				s.after(wait, func() { s.attempt(w, done) })
			})
		})
	})
}

// wake lets every walker of pl waiting for an answer ask again, in walker
// order.
func (s *sim) wake(pl *process) {
	for _, w := range slices.SortedFunc(maps.Keys(pl.waiting), func(a, b *walker) int { return a.id - b.id }) {
		s.after(0, pl.waiting[w])
	}
}

type event struct {
	at  time.Time
	seq int
	f   func()
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].at.Before(e[j].at) || e[i].at.Equal(e[j].at) && e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any) {
	if ev, ok := x.(event); ok {
		*e = append(*e, ev)
	}
}
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}
