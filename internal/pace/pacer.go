package pace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/schedule"
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
	fleet   *fleet        // nil: not shared (fleet.go)
	// The requests let go and not yet released, and not yet answered (the
	// gate's): this run's.
	inFlight, unanswered int
	// slotted counts the requests waiting for a slot of the fleet's
	// schedule, or holding one: each will go as soon as it is due, and
	// counts with those in flight against a limit, and a probe's one.
	slotted int
	// pace is the model's rate as x/time/rate works it, with its tokens:
	// a bucket of one, within the ceiling. Shared, the fleet's slots space
	// the requests in its place, and capped, the ceiling alone, holds them
	// to the user's setting (nil for none).
	pace   *rate.Limiter
	capped *rate.Limiter
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
	// paced: shared, it waited for its slot, due after it asked: the
	// fleet went at the pace, slotGap's when the slot was given.
	paced   bool
	slotGap time.Duration
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
// request went: false alone, or with the store away.
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
// Done, then Release. A shared Pacer's request waits for its slot of the
// fleet's schedule before the rest of the model lets it go.
func (p *Pacer) Wait(ctx context.Context) (Ticket, error) {
	var waited Waited
	since := p.clock.Now() // the wait counted so far ends here
	count := func(h Hold) {
		now := p.clock.Now()
		waited[h] += now.Sub(since)
		since = now
	}
	var s slotHeld
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		s.leave(p)
	}()
	for {
		p.mu.Lock()
		changed := p.changed
		t, wait, hold := p.reserve(p.clock.Now(), s.slot != nil, s.alone)
		switch {
		case hold == HoldNone:
			s.slot = nil // used
			s.leave(p)
		case wait == forSlot:
			p.slotted++
			s.counted = true
		default: // held by the rest of the model: the slot is the next request's
			s.leave(p)
		}
		p.mu.Unlock()
		switch {
		case hold == HoldNone:
			t.waited, t.paced, t.slotGap = waited, s.paced, s.gap
			return t, nil
		case wait == forSlot:
			err := s.take(ctx, p)
			count(HoldPace)
			switch {
			case errors.Is(err, schedule.ErrPastDeadline):
				return Ticket{}, ErrOutlastsDeadline
			case err != nil && ctx.Err() != nil:
				return Ticket{}, ctx.Err()
			}
			continue
		}
		poll := wait
		if s.alone {
			// It asks the schedule again once the store may answer.
			poll, s.alone = min(wait, Away), false
		}
		if wait == untilAnswered {
			// An answer wakes it (changed); it also asks again after
			// the longest wait, which bounds every other wait too.
			poll = p.maxWait
		} else if deadline, ok := ctx.Deadline(); ok && since.Add(wait).After(deadline) {
			return Ticket{}, ErrOutlastsDeadline
		}
		select {
		case <-p.clock.After(poll):
		case <-changed:
		case <-ctx.Done():
			return Ticket{}, ctx.Err()
		}
		count(hold)
	}
}

// slotHeld is a request's slot of the fleet's schedule, taken and not yet
// used (nil for none); paced, it was due after it was asked for. While the
// request waits for one or holds one, it is counted in p.slotted.
type slotHeld struct {
	slot    *schedule.Slot
	paced   bool
	gap     time.Duration // the schedule's gap when the slot was given
	counted bool
	alone   bool // the store failed its take: it goes on the run's own pace
}

// take waits for a slot: a store that fails leaves the run alone
// (goAway), the request going on its own pace. p.mu is not held.
func (s *slotHeld) take(ctx context.Context, p *Pacer) error {
	asked := p.clock.Now()
	slot, err := p.fleet.taker.Wait(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		s.slot, s.paced = &slot, slot.Due.After(asked)
		s.gap = time.Duration(p.fleet.taker.Last().Gap) * time.Microsecond
		p.back(p.clock.Now())
		return nil
	case ctx.Err() == nil && !errors.Is(err, schedule.ErrPastDeadline):
		p.goAway(err, p.clock.Now())
		s.alone = true
	}
	s.leave(p)
	return err
}

// leave hands the slot back, for the run's next request, and stops
// counting the request at its slot. p.mu is held.
func (s *slotHeld) leave(p *Pacer) {
	if s.slot != nil {
		p.fleet.taker.Keep(*s.slot)
		s.slot = nil
	}
	if s.counted {
		p.slotted--
		s.counted = false
	}
}

// reserve lets a request go at now (HoldNone), or says what holds it and
// how long it waits before it asks again (an answer may let it go
// sooner); untilAnswered when only an answer can, and forSlot when,
// shared, it goes at a slot of the fleet's schedule, and slotted tells
// it holds none; alone, the schedule's store failed its take, and it goes
// on the run's own pace. p.mu is held.
func (p *Pacer) reserve(now time.Time, slotted, alone bool) (Ticket, time.Duration, Hold) {
	p.tell(asked{}, now)
	// A request about to take a slot counts those of the run that took
	// one before it: a run takes no more slots than it may send; one at
	// its slot counts those in flight alone, as it goes before them.
	waiting := p.slotted
	if slotted {
		waiting = 0
	}
	switch {
	case p.inFlightLimit > 0 && p.inFlight+waiting >= p.inFlightLimit, p.maxConcurrent > 0 && p.inFlight+waiting >= p.maxConcurrent:
		return Ticket{}, untilAnswered, HoldInFlight
	case now.Before(p.pausedTil):
		return Ticket{}, p.pausedTil.Sub(now), HoldPause
	}
	// Away, a request tries the schedule all the same: the Taker fails it
	// at once while it leaves the store alone, and asks again after.
	shared := p.fleet != nil && !alone
	pr, probes := p.phase.(probing)
	switch {
	case probes && p.inFlight+waiting > 0:
		return Ticket{}, untilAnswered, HoldProbe
	case probes && !shared && now.Before(pr.at):
		// Shared, the schedule gives no slot before the probe's time.
		return Ticket{}, pr.at.Sub(now), HoldProbe
	}
	if shared {
		if left, reset, ok := p.fleet.taker.Quota(); ok {
			p.gate.fleetCount(left, reset)
		}
	}
	switch {
	case shared && !slotted:
		// The quota first, as it would stand (a copy of the gate): a slot
		// taken only to wait for a reset would hold the fleet's place for
		// nothing.
		if g := p.gate; g.reserve(now, p.unanswered, p.maxWait) > 0 {
			return Ticket{}, p.gate.reserve(now, p.unanswered, p.maxWait), HoldQuota
		}
		return Ticket{}, forSlot, HoldPace
	case shared:
		if wait := p.ceilingWait(now); wait > 0 {
			return Ticket{}, wait, HoldPace
		}
		if wait := p.gate.reserve(now, p.unanswered, p.maxWait); wait > 0 {
			return Ticket{}, wait, HoldQuota
		}
		if p.capped != nil {
			p.capped.ReserveN(now, 1)
		}
		if !probes && p.synced() { // probing, the curve waits as it was
			p.tell(grew{p.slotGrown()}, now)
		}
	default:
		if wait := p.tokenWait(now); wait > 0 {
			p.tell(heldForPace{p.modelHolds()}, now)
			return Ticket{}, wait, HoldPace
		}
		if wait := p.gate.reserve(now, p.unanswered, p.maxWait); wait > 0 {
			return Ticket{}, wait, HoldQuota
		}
		p.pace.ReserveN(now, 1)
	}
	p.inFlight++
	p.unanswered++
	t := Ticket{sent: now, cut: p.cut, others: p.inFlight - 1, probe: probes, shared: shared}
	if n := len(p.sent); n > 0 {
		t.gap = now.Sub(p.sent[n-1])
	}
	p.tell(went{now, p.modelHolds()}, now)
	p.learned()
	return t, 0, HoldNone
}

// setting is the transition's reading of p.
func (p *Pacer) setting() setting {
	return setting{pace: p.pace.Limit(), ceiling: p.ceiling, maxWait: p.maxWait, fleet: p.heard()}
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
	p.inFlight--
	p.wake()
}

// wake lets every request waiting in Wait ask again.
func (p *Pacer) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}
