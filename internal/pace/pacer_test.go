package pace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const simReads = 300

// simPlans is how many plans a case runs: 40, or PACE_SIM_PLANS. Nine hid
// a tail that forty show, and moved a median by a hundredth from one model
// to another that changed nothing of the plans in between.
func simPlans() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("PACE_SIM_PLANS"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 40
}

func defaultPacer(c Clock) *Pacer { return New(c, 8, 0, 30*time.Second) }

// limiterCase is a limiter real services run, the least time it allows a
// plan (beyond the plan's own time without it), and the targets.
type limiterCase struct {
	name string
	new  func() limiter
	// least is the least time the limit allows the plan's simReads+1
	// requests: a bucket lets its burst through at once and the rest at
	// its rate; a window, all at its rate.
	least time.Duration
	told  int // a limit on requests in flight: the plan told it in advance
	// work is the most a request takes at a service that limits requests
	// in flight, as BenchmarkPacing's rows of the same limit give it, so
	// that the two compare: a limit in flight meets work long enough to
	// reach it.
	work time.Duration
	// oneAtATime is a bucket of one: a request that reaches it up to the
	// network's jitter early is refused, so no client has them counted
	// closer than an interval and half the jitter on average.
	oneAtATime bool
	// miss, when set, is what the model reaches where it misses a target
	// (median, worst, share refused by network): the test holds it there.
	miss map[string]figures
}

// figures are the median and worst ratio to the ideal, and the median share
// of requests refused, in percent.
type figures struct{ median, worst, refused float64 }

// within tells whether got is no worse than f in every figure.
func (f figures) within(got figures) bool {
	return got.median <= f.median && got.worst <= f.worst && got.refused <= f.refused
}

func perSecond(n float64, requests float64) time.Duration {
	return time.Duration(requests / n * float64(time.Second))
}

var unannounced = []limiterCase{
	{name: "bucket burst 1", new: func() limiter { return newBucket(50, 1) }, least: perSecond(50, simReads), oneAtATime: true,
		miss: map[string]figures{"80 ms": {1.26, 1.48, 3.3}}},
	{name: "bucket burst 10", new: func() limiter { return newBucket(50, 10) }, least: perSecond(50, simReads+1-10)},
	{name: "bucket burst 50", new: func() limiter { return newBucket(50, 50) }, least: perSecond(50, simReads+1-50)},
	// nginx's limit_req, burst 20, without nodelay: what comes sooner than
	// the rate waits in nginx, and only a full queue refuses.
	{name: "bucket 50, burst 20 queued", new: func() limiter { return newQueued(50, 20) }, least: perSecond(50, simReads)},
	{name: "bucket 30, burst 1", new: func() limiter { return newBucket(30, 1) }, least: perSecond(30, simReads), oneAtATime: true,
		miss: map[string]figures{"loopback": {1.14, 1.22, 3.3}, "80 ms": {1.21, 1.64, 4.5}}},
	{name: "fixed window", new: func() limiter { return &fixedWindow{n: 50} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.19, 1.31, 3}}},
	{name: "rolling window", new: func() limiter { return &rollingWindow{n: 50} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.23, 1.5, 3}}},
	{name: "rolling, counting refused", new: func() limiter { return &rollingWindow{n: 50, countRefused: true} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.24, 1.41, 3.3}}},
	{name: "bucket burst 10, no Retry-After", new: func() limiter { return silent{newBucket(50, 10)} }, least: perSecond(50, simReads+1-10)},
	// HAProxy's deny: a window that counts what it refuses, and says
	// nothing of when it reopens. The probe that finds it reopened costs
	// up to the time the window stays shut again.
	{name: "rolling, counting refused, no Retry-After", new: func() limiter { return silent{&rollingWindow{n: 50, countRefused: true}} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.14, 1.18, 4.2}}},
	// HAProxy's own counter: a start that overshoots it shuts it for a
	// second or more, and 80 ms away the requests in flight then are
	// refused too, a little over the target.
	{name: "HAProxy's rate, no Retry-After", new: func() limiter { return silent{&periodRate{n: 50}} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.11, 1.16, 3.3}}},
	// The same counter sending Retry-After: 1 with each refusal, as
	// HAProxy's deny with hdr does: the client waits the second out, so a
	// refusal near a plan's end costs it more than the targets allow.
	{name: "HAProxy's rate, Retry-After: 1", new: func() limiter { return &periodRate{n: 50} }, least: perSecond(50, simReads+1),
		miss: map[string]figures{"80 ms": {1.22, 1.4, 2.6}}},
	{name: "halved after 3 s", new: func() limiter { return &stepped{bucket: newBucket(50, 10), after: 3 * time.Second, factor: 0.5} },
		least: 3*time.Second + perSecond(25, simReads+1-10-150),
		miss:  map[string]figures{"loopback": {1.04, 1.14, 3.9}, "80 ms": {1.07, 1.17, 4.5}}},
	// A limit raised (others sharing it stopped) is found only by the
	// cubic's growth past the rate refused, Recover's pace: a longer
	// Recover refuses less and finds it later.
	{name: "doubled after 3 s", new: func() limiter { return &stepped{bucket: newBucket(25, 10), after: 3 * time.Second, factor: 2} },
		least: 3*time.Second + perSecond(50, simReads+1-10-75),
		miss:  map[string]figures{"loopback": {1.38, 1.43, 2.3}, "80 ms": {1.39, 1.51, 3.6}}},
	{name: "4 in flight", new: func() limiter { return &inFlight{n: 4} }, told: 4, work: 100 * time.Millisecond},
	{name: "2 in flight", new: func() limiter { return &inFlight{n: 2} }, told: 2, work: 60 * time.Millisecond,
		miss: map[string]figures{"loopback": {1.11, 2.75, 2}, "80 ms": {0.59, 0.77, 3.6}}},
}

var announced = []limiterCase{
	{name: "quota 100/10s github", new: func() limiter { return quota(10*time.Second, "github") }, least: 30 * time.Second},
	{name: "quota 100/10s ietf", new: func() limiter { return quota(10*time.Second, "ietf") }, least: 30 * time.Second},
	{name: "quota 100/2s github", new: func() limiter { return quota(2*time.Second, "github") }, least: 6 * time.Second},
	{name: "quota 100/2s ietf", new: func() limiter { return quota(2*time.Second, "ietf") }, least: 6 * time.Second},
	// GitHub's windows: each opened by the first request after the last
	// one ended, its reset an epoch second rounded up.
	{name: "quota 100/10s github, opened", new: func() limiter { return openedQuota(10*time.Second, "github") }, least: 30 * time.Second},
	{name: "quota 100/2s github, opened", new: func() limiter { return openedQuota(2*time.Second, "github") }, least: 6 * time.Second},
}

// quota is 100 requests a window, the windows at fixed times.
func quota(window time.Duration, family string) limiter {
	return &announcing{newQuotaService(100, window, 300*time.Millisecond, family)}
}

// openedQuota is 100 requests a window, each window opened by a request.
func openedQuota(window time.Duration, family string) limiter {
	s := newQuotaService(100, window, 0, family)
	s.q.Opened = true
	return &announcing{s}
}

var networks = []struct {
	name string
	net  network
}{
	{"loopback", network{rtt: 200 * time.Microsecond, jitter: 2 * time.Millisecond, work: 2 * time.Millisecond}},
	{"80 ms", network{rtt: 80 * time.Millisecond, jitter: 2 * time.Millisecond, work: 2 * time.Millisecond}},
}

// runCases simulates every case on every network, simPlans plans each, and
// holds the median and worst ratio to the ideal and the median share
// refused to target, or to the case's miss.
func runCases(t *testing.T, cases []limiterCase, target func(name string) figures) {
	for _, n := range networks {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", c.name, n.name), func(t *testing.T) {
				got := c.figures(n.net, func(c Clock) simPacer { return defaultPacer(c) })
				want, missed := c.miss[n.name]
				goal := target(c.name)
				held := ""
				if missed {
					held = fmt.Sprintf("; held at <= %.2fx, <= %.2fx, <= %.1f%%", want.median, want.worst, want.refused)
				} else {
					want = goal
				}
				t.Logf("median %.3fx, worst %.3fx, %.2f%% refused; target <= %.2fx, <= %.2fx, <= %.1f%%%s",
					got.median, got.worst, got.refused, goal.median, goal.worst, goal.refused, held)
				if !want.within(got) {
					t.Errorf("median %.3fx, worst %.3fx, %.2f%% refused: want <= %.2fx, <= %.2fx, <= %.1f%%",
						got.median, got.worst, got.refused, want.median, want.worst, want.refused)
				}
			})
		}
	}
}

// network is net as the case runs on it, with the case's work.
func (c limiterCase) network(net network) network {
	if c.work > 0 {
		net.work = c.work
	}
	return net
}

// figures simulates the case's plans on net through pacers that newPacer
// makes: the median and worst ratio to the ideal, and the median share
// refused.
func (c limiterCase) figures(net network, newPacer func(Clock) simPacer) figures {
	var ratios, shares []float64
	net = c.network(net)
	for seed := range simPlans() {
		free := simulate(seed, simReads, nil, net, defaultPacer, 0).took
		least := c.least
		if c.oneAtATime {
			least += simReads * net.jitter / 2
		}
		ideal := max(free, least)
		if c.told > 0 {
			ideal = max(ideal, simulate(seed, simReads, nil, net, nil, c.told).took)
		}
		r := simulateOf(seed, simReads, c.new(), net, newPacer)
		ratios = append(ratios, r.ratio(ideal))
		shares = append(shares, r.share())
	}
	slices.Sort(ratios)
	slices.Sort(shares)
	return figures{ratios[len(ratios)/2], ratios[len(ratios)-1], shares[len(shares)/2]}
}

// TestPacer_unannounced holds the pacer to its targets against limiters
// that announce nothing: median at most 1.15x the ideal, no plan over
// 1.3x, at most 3% of requests refused; or to what it reaches where it
// misses them.
func TestPacer_unannounced(t *testing.T) {
	runCases(t, unannounced, func(string) figures { return figures{1.15, 1.3, 3} })
}

// TestPacer_announced holds the pacer to its targets against announced
// quotas: with 10 s windows median at most 1.12x, no plan over 1.3x; with
// 2 s windows no plan over 1.5x; at most 0.5% refused by either.
func TestPacer_announced(t *testing.T) {
	runCases(t, announced, func(name string) figures {
		if strings.Contains(name, "10s") {
			return figures{1.12, 1.3, 0.5}
		}
		return figures{1.5, 1.5, 0.5}
	})
}

// TestPacer_unlimited: with no limit met, the pacer costs only its start:
// Terraform's first reads go a hundredth of a second apart, not at once,
// some 4-5% of this short plan (it misses "nothing slower").
func TestPacer_unlimited(t *testing.T) {
	for _, n := range networks {
		var worst float64
		for seed := range uint64(9) {
			bare := simulate(seed, simReads, nil, n.net, nil, 8).took
			paced := simulate(seed, simReads, nil, n.net, defaultPacer, 0).took
			worst = max(worst, float64(paced)/float64(bare))
		}
		t.Logf("%s: worst %.3fx the plan without a pacer", n.name, worst)
		if worst > 1.05 {
			t.Errorf("%s: worst %.3fx the plan without a pacer, want <= 1.05x", n.name, worst)
		}
	}
}

// A ceiling the user set caps the pace from the start, and a refusal's
// cubic never climbs past it.
func TestPacer_ceiling(t *testing.T) {
	r := simulate(1, 100, nil, networks[0].net, func(c Clock) *Pacer { return New(c, 8, 10, 30*time.Second) }, 0)
	// 101 requests at 10 a second, the first one at once.
	if r.took < 10*time.Second {
		t.Errorf("took %v at a ceiling of 10 a second, want >= 10s", r.took)
	}
}

// No more than maxConcurrent requests go at once; a place frees when the
// request is released, not when it is answered.
func TestPacer_maxConcurrent(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 2, 0, time.Minute)
	first, _, ok := p.reserveOK(clock.now)
	if !ok {
		t.Fatal("the first request waits")
	}
	p.Done(first, Answer{})
	var tickets []Ticket
	for range 3 {
		clock.now = clock.now.Add(time.Second)
		if tk, _, ok := p.reserveOK(clock.now); ok {
			tickets = append(tickets, tk)
		}
	}
	if len(tickets) != 1 {
		t.Fatalf("%d let go with the first still in its place, want 1", len(tickets))
	}
	p.Release(first)
	clock.now = clock.now.Add(time.Second)
	if _, _, ok := p.reserveOK(clock.now); !ok {
		t.Error("a place freed, and the request still waits")
	}
}

// A Retry-After past a rounding holds every request until it passes; one
// of a second is a rounding, and holds none.
func TestPacer_retryAfter(t *testing.T) {
	for _, c := range []struct {
		retryAfter, held time.Duration
	}{{time.Second, 0}, {5 * time.Second, 4 * time.Second}} {
		clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
		p := New(clock, 8, 0, time.Minute)
		tk, _, _ := p.reserveOK(clock.now)
		p.Done(tk, Answer{})
		p.Release(tk)
		clock.now = clock.now.Add(time.Second)
		tk, _, _ = p.reserveOK(clock.now)
		p.Done(tk, Answer{Refused: true, RetryAfter: c.retryAfter})
		p.Release(tk)
		clock.now = clock.now.Add(time.Second) // past a rounding's second
		_, wait, ok := p.reserveOK(clock.now)
		if c.held == 0 && !ok || c.held > 0 && wait != c.held {
			t.Errorf("Retry-After %v: let go %v, wait %v; want a wait of %v", c.retryAfter, ok, wait, c.held)
		}
	}
}

// Wait fails at once, rather than sleep, when the wait would outlast the
// context's deadline.
func TestPacer_waitOutlastingTheDeadline(t *testing.T) {
	// The deadline is on the wall clock: so is the fake one here.
	clock := &fakeClock{now: time.Now()}
	p := New(clock, 8, 0, time.Minute)
	tk, _, _ := p.reserveOK(clock.now)
	p.Done(tk, Answer{Refused: true, RetryAfter: 30 * time.Second})
	p.Release(tk)
	ctx, cancel := context.WithDeadline(context.Background(), clock.now.Add(10*time.Second))
	defer cancel()
	if _, err := p.Wait(ctx); !errors.Is(err, ErrOutlastsDeadline) {
		t.Errorf("Wait: %v, want ErrOutlastsDeadline", err)
	}
}

// reserveOK is reserve, telling only whether the request went.
func (p *Pacer) reserveOK(now time.Time) (Ticket, time.Duration, bool) {
	t, wait, hold := p.reserve(now)
	return t, wait, hold == HoldNone
}

// TestPacer_aCeilingHoldsForAsLongAsAPlanWaits: requests that wait for the
// user's ceiling do not grow the model's start. They did: after some
// 100 s of waiting, its doubling reached infinity and ended with no rate
// refused, a pace of nothing, and every request went at once (3,000
// requests under a ceiling of 10 a second took 102 s).
func TestPacer_aCeilingHoldsForAsLongAsAPlanWaits(t *testing.T) {
	clock := &leapClock{now: time.Unix(1_800_000_000, 0)}
	p := New(clock, 8, 10, time.Minute)
	start := clock.now
	for range 3000 {
		tk, err := p.Wait(bg)
		if err != nil {
			t.Fatal(err)
		}
		p.Done(tk, Answer{})
		p.Release(tk)
	}
	if took := clock.now.Sub(start); took < 299*time.Second || p.pace.Limit() != 10 || p.grown != 0 {
		t.Fatalf("3,000 requests under a ceiling of 10 a second took %v, pace %v, grown %v: want 300 s at 10, grown none",
			took, p.pace.Limit(), p.grown)
	}
}

// TestNanos: a wait out of int64's range, of either sign, or NaN, is
// never left to the implementation's conversion.
func TestNanos(t *testing.T) {
	for in, want := range map[float64]time.Duration{
		math.Inf(1): math.MaxInt64, 1e30: math.MaxInt64, math.MaxInt64: math.MaxInt64,
		math.Inf(-1): 0, -1e30: 0, math.NaN(): 0, 0: 0, 1.5: 1, 2e9: 2 * time.Second,
	} {
		if got := nanos(in); got != want {
			t.Errorf("nanos(%v) = %v, want %v", in, got, want)
		}
	}
}
