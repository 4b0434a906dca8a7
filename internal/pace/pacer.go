package pace

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The parameters of the Pacer's model (package doc). Growth counts only
// the time requests waited for the pace.
const (
	StartRate     = 100                    // the pace before the first refusal
	StartDoubling = 100 * time.Millisecond // how long it takes a start to double
	Backoff       = 0.8                    // a cut's share of the rate refused
	FirstBackoff  = 0.5                    // and where a start refused resumes
	Recover       = 3 * time.Second        // the cubic's time back to the rate refused
	// RoundingPause is the longest Retry-After taken for the rounding of a
	// shorter wait ("1" often means 20 ms), holding only the request refused.
	RoundingPause = time.Second
	RateSpan      = 250 * time.Millisecond // how far back the rate requests went at is measured
	// ProbeShare: a spent window reopens within its Retry-After, so the
	// first probe waits at least that share of it.
	ProbeShare = 4
	// A limit on requests in flight is told from a rate by the others in
	// flight with the last InFlightHistory accepted, once InFlightEvidence are.
	InFlightHistory  = 16
	InFlightEvidence = 8
	// RefusedInARow refusals with no acceptance between them tell a limit
	// that counts requests over a span from one that spaces them: a
	// bucket of one refuses a request here and there.
	RefusedInARow = 3
)

// ErrOutlastsDeadline is Wait's answer when the pace, or a pause the
// service asked for, would outlast the context's deadline.
var ErrOutlastsDeadline = fmt.Errorf("waiting for the rate limit would outlast request_timeout_seconds: %w", context.DeadlineExceeded)

// Pacer decides when each request may go: no more than maxConcurrent at
// once, within an announced quota (the gate), no faster than the user's
// ceiling, and at the pace of the model the package doc states, whose
// steps Done takes. The zero value is not usable; use New.
type Pacer struct {
	clock         Clock
	ceiling       rate.Limit // the user's requests_per_second; rate.Inf when unset
	maxConcurrent int
	maxWait       time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, at each answer
	shared  *sharing      // nil: not shared (share.go)
	own     counts        // this process's requests let go
	// Derived from the members' counts (own alone when not shared): let go
	// and not yet released, and not yet answered (the gate's).
	inFlight, unanswered int
	// pace is the model's rate as x/time/rate works it, with its tokens:
	// a bucket of one, within the ceiling (saved beside the model, as
	// state.pace, while shared).
	pace *rate.Limiter
	// lead is how long before its token the pace may let a request go:
	// while shared, the last round trip to the store, which the request
	// waits for anyway (share.go); 0 otherwise.
	lead time.Duration
	// ahead is how long the members waiting for the pace before this one
	// take, a token each, as the last ask found them: 0 but while shared.
	ahead  time.Duration
	events []Event // the model's changes since Events last took them
	model
}

// tokenState is an x/time/rate limiter of burst 1 as a value: its rate, and
// the tokens it held at a time.
type tokenState struct {
	limit  float64
	tokens float64
	at     time.Time
}

// Ticket is a request let go.
type Ticket struct {
	sent time.Time
	cut  uint32        // the model's cut when it went
	gap  time.Duration // since the request let go before it
	// beforeToken: let go before its token came, with others in one round
	// trip to the store, all of which go as it ends: their gaps are the
	// pace's, not what the service saw.
	beforeToken bool
	// probe: let go while probing, as the one request probing lets go at
	// a time; only its answer is news of the probe.
	probe  bool
	others int // the others in flight when it went
	// What the request waited for, and whether the pace was shared when
	// it went: for the log.
	waited Waited
	shared bool
}

// Waited is how long the request waited to go, by what held it.
func (t Ticket) Waited() Waited { return t.waited }

// Shared tells whether the pace was shared with other processes when the
// request went: false alone, with the store away, or busy for its step.
func (t Ticket) Shared() bool { return t.shared }

// Answer is what the service said to a request.
type Answer struct {
	Refused    bool          // a rate limit's answer (429, or a 403 that says so)
	RetryAfter time.Duration // how long a refusal asked to wait, if it did
	Quota      http.Header   // the answer's headers, for the quota they announce
	Failed     bool          // no answer at all: the request may not have arrived
}

// untilAnswered is the wait of a request that only an answer can let go
// (requests in flight at their limit, a probe's answer, a quota's window
// that is only guessed): Wait wakes it when one arrives.
const untilAnswered = time.Duration(math.MaxInt64)

// New returns a Pacer letting maxConcurrent requests go at once (none when
// 0), at most ceiling a second (no ceiling when 0), and holding a request
// at most maxWait for a quota's reset or a pause the service asked for.
func New(clock Clock, maxConcurrent int, ceiling float64, maxWait time.Duration) *Pacer {
	p := &Pacer{clock: clock, ceiling: rate.Inf, maxConcurrent: maxConcurrent, maxWait: maxWait, changed: make(chan struct{})}
	if ceiling > 0 {
		p.ceiling = rate.Limit(ceiling)
	}
	p.begin()
	return p
}

// begin sets the model as it is before the first request.
func (p *Pacer) begin() {
	p.model = model{phase: starting{}}
	p.pace = rate.NewLimiter(min(rate.Limit(StartRate), p.ceiling), 1)
}

// Wait blocks until a request may go, or ctx is done; it fails at once
// when the wait would outlast ctx's deadline. Every Ticket is followed by
// Done, then Release. The waiters of a shared Pacer take turns at asking,
// but for those that find its round trip to the store under way: they ask
// in the next.
func (p *Pacer) Wait(ctx context.Context) (Ticket, error) {
	s := p.shared // set before the first Wait, never after
	turn := false
	defer func() {
		if turn {
			<-s.turn
		}
	}()
	var waited Waited
	since := p.clock.Now() // the wait counted so far ends here
	count := func(h Hold) {
		now := p.clock.Now()
		waited[h] += now.Sub(since)
		since = now
	}
	for {
		p.mu.Lock()
		changed := p.changed
		join := s != nil && s.committing // its round trip is coming anyway
		p.mu.Unlock()
		if s != nil && !join && !turn {
			// Waiting for the turn is waiting behind this process's
			// requests ahead of it: the pace's.
			select {
			case s.turn <- struct{}{}:
				turn = true
			case <-changed: // an answer: a round trip may be under way
				count(HoldPace)
				continue
			case <-ctx.Done():
				return Ticket{}, ctx.Err()
			}
			count(HoldPace)
		}
		t, wait, hold := p.ask(ctx, p.clock.Now())
		count(HoldStore) // the round trip, when shared; nothing alone
		if hold == HoldNone {
			if early := t.sent.Sub(p.clock.Now()); early > 0 {
				// Let go before its token, at most SharedPoll: it
				// goes at its time, and is followed by Done whatever
				// ctx says meanwhile.
				<-p.clock.After(early)
				count(HoldPace)
			}
			t.waited = waited
			return t, nil
		}
		p.mu.Lock()
		poll, woken := p.pollAfter(wait), changed
		if !p.answersWake() {
			woken = nil
		}
		p.mu.Unlock()
		if wait == untilAnswered {
			// An answer wakes it (changed); it also asks again after
			// the longest wait, which bounds every other wait too.
			poll = min(poll, p.maxWait)
		} else if deadline, ok := ctx.Deadline(); ok && since.Add(wait).After(deadline) {
			p.leaveTurn()
			return Ticket{}, ErrOutlastsDeadline
		}
		select {
		case <-p.clock.After(poll):
		case <-woken:
		case <-ctx.Done():
			p.leaveTurn()
			return Ticket{}, ctx.Err()
		}
		count(hold)
	}
}

// ask is reserve as a step of the model (share.go), at now or, shared, when
// its commit runs it; a wait is counted from then.
func (p *Pacer) ask(ctx context.Context, now time.Time) (t Ticket, wait time.Duration, hold Hold) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ranAt, shared, slight := now, false, false
	p.step(ctx, now, queuedStep{
		op: func(now time.Time) {
			held, waiting, doubling := p.held, p.own.Waiting, p.doubling()
			ranAt = now
			t, wait, hold = p.reserve(now)
			// Held as it was, no turn begun and no doubling ended: it
			// changed only the poll's time and the pace's growth since
			// the poll before, which the next step saved counts from
			// that poll if this one is not kept (reserve).
			slight = hold != HoldNone && hold != HoldQuota && p.held == held && p.own.Waiting.Equal(waiting) && p.doubling() == doubling
		},
		busy:   func() { ranAt = p.clock.Now(); t, wait, hold = Ticket{}, p.busyWait(ranAt), HoldStore },
		shared: &shared,
		slight: func() bool { return slight },
	})
	if hold != HoldNone && wait != untilAnswered && p.shared != nil {
		wait = max(0, wait-p.clock.Now().Sub(ranAt))
	}
	t.shared = shared
	return t, wait, hold
}

// reserve lets a request go at now, or up to lead later at its token's
// time (HoldNone), or says what holds it and how long it waits before it
// asks again (an answer may let it go sooner); untilAnswered when only an
// answer can.
func (p *Pacer) reserve(now time.Time) (Ticket, time.Duration, Hold) {
	p.tell(asked{}, now)
	p.ahead = 0
	// A member waits its turn only while the pace holds it (turnsAhead).
	waiting := p.own.Waiting
	p.own.Waiting = time.Time{}
	switch {
	case p.inFlightLimit > 0 && p.inFlight >= p.inFlightLimit, p.maxConcurrent > 0 && p.own.InFlight >= p.maxConcurrent:
		return Ticket{}, untilAnswered, HoldInFlight
	case now.Before(p.pausedTil):
		return Ticket{}, p.pausedTil.Sub(now), HoldPause
	}
	pr, probes := p.phase.(probing)
	switch {
	case probes && p.inFlight > 0:
		return Ticket{}, untilAnswered, HoldProbe
	case probes && now.Before(pr.at):
		return Ticket{}, pr.at.Sub(now), HoldProbe
	}
	at := now // when it goes
	if wait := p.tokenWait(now); wait > 0 {
		if wait > p.lead {
			p.tell(heldForPace{p.modelHolds()}, now)
			p.own.Waiting = cmp.Or(waiting, now)
			p.ahead = p.turnsAhead(p.own.Waiting)
			return Ticket{}, wait + p.ahead, HoldPace
		}
		at = now.Add(wait)
	}
	if wait := p.gate.reserve(now, p.unanswered, p.maxWait); wait > 0 {
		return Ticket{}, wait, HoldQuota
	}
	p.pace.ReserveN(now, 1) // its token, which may be one to come
	p.inFlight++
	p.unanswered++
	p.own.InFlight++
	p.own.Unanswered++
	t := Ticket{sent: at, cut: p.cut, others: p.inFlight - 1, beforeToken: at.After(now), probe: probes}
	if n := len(p.sent); n > 0 {
		t.gap = at.Sub(p.sent[n-1])
	}
	p.tell(went{at, p.modelHolds()}, now)
	return t, 0, HoldNone
}

// setting is the transition's reading of p.
func (p *Pacer) setting() setting {
	return setting{pace: p.pace.Limit(), ceiling: p.ceiling, maxWait: p.maxWait}
}

// tell steps the model by e, the one way anything changes it, and gives
// the pace's tokens what the step asked of them and the log its events.
func (p *Pacer) tell(e modelEvent, now time.Time) {
	out := p.next(e, now, p.setting())
	if out.takeBack {
		p.pace = limiterAt(p.pace.Limit(), min(p.pace.TokensAt(now), 0), now)
	}
	if out.pace > 0 {
		p.pace.SetLimitAt(now, out.pace)
	}
	for _, ev := range out.events {
		p.event(ev.Message, ev.Fields)
	}
}

// tokenWait is how long until the pace's next token.
func (p *Pacer) tokenWait(now time.Time) time.Duration {
	tokens := p.pace.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return nanos(math.Ceil((1 - tokens) / float64(p.pace.Limit()) * float64(time.Second)))
}

// modelHolds tells whether the model's pace, not the user's ceiling, is
// what holds requests back: only then does waiting grow the model. Grown
// under the ceiling, a start doubled for as long as a plan waited for
// it, past any rate and, after some 100 s, to infinity, where it ended
// with no rate refused: a pace of nothing. p.mu is held.
func (p *Pacer) modelHolds() bool { return p.pace.Limit() < p.ceiling }

// Release frees the place of the request t let go, once its answer is read.
func (p *Pacer) Release(Ticket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step(context.Background(), p.clock.Now(), queuedStep{op: func(time.Time) { p.inFlight--; p.own.InFlight-- }})
	p.wake()
}

// wake lets every request waiting in Wait ask again.
func (p *Pacer) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}
