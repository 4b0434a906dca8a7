package client

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// Some services of this kind revoke a token that keeps hitting the rate
// limit, so the client never hammers: every attempt (retries and redirects
// included) passes through one throttle per provider block, which
//   - caps the requests in flight,
//   - after the service's first 429, paces requests at the rate it was seen
//     to accept, follows that rate up while the service keeps accepting and
//     down when it refuses again,
//   - and holds every request back while the service refuses everything (a
//     fixed or rolling window spent: until it reopens), or asks for a real
//     pause (a Retry-After longer than a rounding).
//
// Some services limit requests in flight rather than their rate, and answer
// 429 too. A 429 to a request that went with two or more others on the
// wire, when of the requests that went with as many more were refused than
// accepted (refusedInFlight), is taken as such a limit: from then on no
// more are sent at once, and they are not paced for it, as a pace would cut
// the rate far below what the service allows. One that came before enough
// were accepted to tell is taken for the rate, and told again once they
// have been.
//
// Services limit with token buckets (a rate, and a burst they allow on top)
// or windows (fixed per wall-clock second, or rolling), and round
// Retry-After up to whole seconds, so a 429 says little about how long to
// wait: "Retry-After: 1" often means 20 ms. What does say something is the
// number of requests accepted between two 429s: a token bucket was empty at
// both, so it refilled at least that many. The first 429 comes when the
// burst is spent, so the rate accepted until then overstates the limit: the
// pace starts below it and grows quickly until the next 429, and from then
// on stays just under the rate measured between the last two, growing only
// gently. A bucket of one or two (its first 429 came after two requests or
// fewer) tells more: it refuses every request that follows the one before
// more closely than its rate allows, whatever the rate offered, so its rate
// is narrowed down between the fastest pace it held and the slowest it
// refused; a lone 429 after that is scheduling's jitter, and only steps
// the pace back a little.
//
// Before the first 429 nothing is paced, but requests do not all go at
// once either: each waits for an answer to the one sent before it, or for
// firstSpacing. A service that refuses the second of ten simultaneous
// requests (a bucket of one), or whose fixed window runs out mid-wave,
// would otherwise refuse all that were already sent; an unlimited one
// answers within a millisecond or two, and what Terraform offers (some 70
// reads a second) is far below one every firstSpacing.
//
// Each request is spaced from the one actually sent before it, not from a
// schedule, and from when that one went on the wire, not from when it was
// let go: a request that wakes late, or waits for a connection, must not
// have the next one follow it too closely, as a service with a burst of one
// refuses any two requests closer than its rate allows. Each is let go early
// by how late such requests usually reach the wire, so that they reach it
// one interval apart.
//
// A user-set requests-per-second ceiling caps the pace from the start.
type throttle struct {
	slots   chan struct{}
	turn    chan struct{} // held by the one request waiting for the pace
	wake    chan struct{} // an answer came: the request waiting may go sooner
	ceiling rate.Limit    // rate.Inf when the user set none
	maxWait time.Duration

	mu          sync.Mutex
	pace        rate.Limit      // requests per second; rate.Inf before the first 429
	lastSent    time.Time       // when the request sent last was let go
	spacedFrom  time.Time       // when it went on the wire, or was let go until then
	wireAt      time.Time       // when it went on the wire; zero until it has
	atPace      bool            // it was due an interval of the pace after the one before went on the wire, and that one was not refused
	refusedLast bool            // the request sent last was answered 429
	unwritten   bool            // it has not gone on the wire yet, nor failed
	quickest    time.Duration   // how long an answer takes, from the wire, at the quickest of late
	refusedTook []time.Duration // how long the last 429s took, up to refusedHistory (answeredLate)
	dueAt       time.Time       // when the request sent last was due, had it to wait
	lag         time.Duration   // how late after it was due such a request usually went on the wire
	inFlight    int             // requests sent and not yet answered
	onWire      int             // of those, the ones that went on the wire
	busyOK      []wireBusy      // the requests accepted last, up to busyHistory (refusedInFlight)
	busyRefused []wireBusy      // the 429s since the first of those, but for the first event's others
	inFlightCap int             // the most requests in flight the service accepts, once learnt; 0 before
	unsure      int             // the fewest others on the wire with a 429 taken for the rate before enough were accepted to tell (refusedInFlight); 0 once told
	answered    bool            // a response came to the request sent last
	pausedUntil time.Time
	lastCut     time.Time   // when a 429 last set the pace (a refusal event)
	firstEvent  time.Time   // when the first 429 set the pace
	stepStart   time.Time   // since when sent counts
	sent        int         // requests sent since stepStart
	sinceCut    int         // requests sent since lastCut and accepted
	blocked     int         // events in a row with nothing accepted in between
	windowed    bool        // the service has refused everything for a while: a window
	smallBucket bool        // the first 429 came after two requests or fewer: a bucket of one or two
	byRequest   bool        // a bucket of one (oneAtATime, busy <= 1 at the first 429): climbed a step per request (grow)
	kind        windowKind  // of the window, once a probe has told
	guess       windowKind  // of the window, while a probe tells
	otherwise   time.Time   // when the window reopens if the guess is wrong
	spent       [3]int      // by kind, what the window accepted when last found spent
	known       rate.Limit  // the rate accepted between the last two events; 0 before
	firstBurst  int         // the requests accepted in the second before the first 429: at least a bucket's burst (refilled)
	cutEarly    bool        // known was guessed by an early cut, not measured: probed past sooner (grow)
	lo, hi      rate.Limit  // while a small bucket's rate is narrowed down: the pace it held, and the one it refused; 0 after
	accepted    []time.Time // times of accepted requests within measureWindow
	letGo       []time.Time // when the requests let go within measureWindow were, but for those refused (a window's places, due)
}

const (
	throttleWindow     = time.Second            // over which the first estimate is measured
	measureWindow      = 2 * time.Second        // the longest span a later estimate is measured over
	probeGap           = 250 * time.Millisecond // the first hold while the service refuses everything
	minInterval        = 250 * time.Millisecond // between events, for the accepted rate to mean something
	earlyCut           = 0.8                    // of the pace, for a 429 too soon after an event to measure
	jitterRun          = 4                      // accepted in a row before a small bucket's 429 is put down to jitter
	narrowHold         = 500 * time.Millisecond // that a small bucket holds a pace for, to take it as below its rate
	narrowRequests     = 4                      // that it holds the pace for, if that is longer
	atPaceWithin       = 1.05                   // intervals of the pace, for a request to count as due at it
	narrowEnough       = 1.03                   // between the paces a small bucket held and refused, to stop narrowing
	growthStep         = 200 * time.Millisecond // between increases; half as long in the first climb, a quarter for a small bucket (stepDue)
	firstCut           = 0.7                    // of the rate accepted until the first 429, burst included
	settle             = 0.97                   // of the rate accepted between two events
	heldMargin         = 0.99                   // of the pace a small bucket held, once its rate is narrowed down
	fastGrowth         = 1.4                    // per step, below settle × known
	slowGrowth         = 0.002                  // per step, around known: 1% a second, doubling every two quiet seconds
	roundingPause      = 2 * time.Second        // a Retry-After up to this is a rounding, not a pause
	quietBeforeProbing = 2 * time.Second        // after an event, before the pace grows past settle × known
	firstSpacing       = 5 * time.Millisecond   // before the first 429, between requests sent with no answer between
	windowMargin       = 20 * time.Millisecond  // after a window reopens, for the service's clock
	maxLag             = 2 * time.Millisecond   // the most one request counts for in lag
	busyHistory        = 64                     // accepted requests whose others in flight are kept
	refusedHistory     = 16                     // 429s whose answers' times are kept
	unsureHistory      = 20                     // accepted requests, at least, to tell a 429 taken for the rate again (unsure)
	busyToTell         = 4                      // accepted requests per other on the wire, at least, to tell a limit in flight from a rate
	awakeFor           = time.Millisecond       // the last of a wait, spent awake rather than on a timer (awake)
)

func newThrottle(maxConcurrent int, requestsPerSecond float64, maxWait time.Duration) *throttle {
	ceiling := rate.Inf
	if requestsPerSecond > 0 {
		ceiling = rate.Limit(requestsPerSecond)
	}
	return &throttle{
		slots:   make(chan struct{}, maxConcurrent),
		turn:    make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),
		ceiling: ceiling,
		maxWait: maxWait,
		pace:    ceiling,
	}
}

// acquire waits for a slot, then for its turn, any pause and the pace; it
// returns early with the context's error, and at once when the wait would
// outlast the context's deadline. The request let go is known by when it
// was (sent), to wrote, landed and observe; busy is how many others were in
// flight then, for observe should it never go on the wire (wrote).
func (t *throttle) acquire(ctx context.Context) (release func(), sent time.Time, busy int, err error) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, sent, 0, ctx.Err()
	}
	release = func() { <-t.slots }
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, sent, 0, ctx.Err()
	}
	defer func() { <-t.turn }()
	var due time.Time
	waited := false
	for {
		now := time.Now()
		t.grow(now)
		due = t.due()
		wait := due.Sub(now)
		if wait <= 0 {
			break
		}
		waited = true
		if deadline, ok := ctx.Deadline(); ok && deadline.Sub(now) < wait {
			release()
			return nil, sent, 0, errWaitOutlastsDeadline
		}
		if g := t.nextStep(); g.After(now) && g.Before(due) {
			// The pace may grow by then, and bring the request forward.
			wait = g.Sub(now)
		}
		if wait <= awakeFor {
			awake(now.Add(wait))
			continue
		}
		timer := time.NewTimer(wait - awakeFor)
		select {
		case <-timer.C:
		case <-t.wake:
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			release()
			return nil, sent, 0, ctx.Err()
		}
	}
	t.mu.Lock()
	sent = time.Now()
	// A bucket of one counts from the last request it took: one that
	// follows a refused request by an interval follows that one by more,
	// and its being accepted says nothing of the pace.
	t.atPace = waited && t.pace != rate.Inf && !t.wireAt.IsZero() && !t.refusedLast &&
		float64(due.Sub(t.wireAt)) < atPaceWithin*float64(t.interval())
	t.lastSent, t.spacedFrom, t.unwritten, t.answered, t.refusedLast = sent, sent, true, false, false
	t.wireAt = time.Time{}
	t.dueAt = time.Time{}
	if waited {
		t.dueAt = due
	}
	t.sent++
	t.letGo = append(trimBefore(t.letGo, sent.Add(-measureWindow)), sent)
	busy = t.inFlight
	t.inFlight++
	t.mu.Unlock()
	return release, sent, busy, nil
}

// awake waits until at without sleeping. A timer wakes its goroutine up to
// a millisecond late, more on a busy machine, and by a different amount each
// time: requests paced by timers alone reach the service a millisecond or
// two closer together now and then, which a bucket of one refuses, so the
// pace must keep that much below its rate. The last of each wait is spent
// yielding instead, at most awakeFor, some 5% of a core at 50 requests a
// second.
func awake(at time.Time) {
	for time.Now().Before(at) {
		runtime.Gosched()
	}
}

// wrote marks the request let go at sent as on the wire: should it be the
// last one let go, the next is spaced from now. It returns how many others
// are on the wire, for observe: what the service finds in flight as the
// request reaches it. Counted when it was let go instead, that misses the
// ones let go after it that reach the service first, as on a busy machine
// the few milliseconds between the two may hold several.
func (t *throttle) wrote(sent time.Time) (busy int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	busy = t.onWire
	t.onWire++
	if sent.Equal(t.lastSent) {
		now := time.Now()
		if !t.dueAt.IsZero() {
			t.lag += (min(now.Sub(t.dueAt), maxLag) - t.lag) / 16
		}
		t.spacedFrom, t.wireAt, t.unwritten = now, now, false
		t.wakeOne()
	}
	return busy
}

// landed marks the request let go at sent as answered, or failed: the
// service has counted it, or never will. Written is whether it went on the
// wire (wrote).
func (t *throttle) landed(sent time.Time, written bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inFlight--
	if written {
		t.onWire--
	}
	if sent.Equal(t.lastSent) {
		t.unwritten = false
	}
	t.wakeOne()
}

// answeredLate spaces the next request, for a small bucket, from when the
// service took the last one, should its answer show that it took it late:
// a service that takes one request late refuses the next one on time.
//
// An answer can come late because the request reached the service late (it
// was counted late), or because the service's work after counting it took
// longer, and an accepted request's answer alone does not tell which. A
// 429's does: it is answered as the request is counted, with no work after
// it. So an answer later than the quickest (from the wire) is taken as that
// much late, but by no more than the 429s' own answers varied by
// (refusedSpread). A service whose requests reach it late at random answers
// its 429s late too, if less so, as those it refuses tend to be the ones
// that came early; one whose work varies refuses as quickly each time, and
// counts each request as it arrives: spacing from its answers would hold
// every request back by its work.
func (t *throttle) answeredLate(now time.Time, refused bool) {
	took := now.Sub(t.spacedFrom)
	if refused {
		// Not counted: nothing to space from.
		t.refusedTook = appendBounded(t.refusedTook, took, refusedHistory)
		return
	}
	if t.quickest == 0 || took < t.quickest {
		t.quickest = took
	} else {
		// Slowly up, should the network slow down.
		t.quickest += (took - t.quickest) / 64
	}
	if t.smallBucket {
		t.spacedFrom = t.spacedFrom.Add(max(min(took-t.quickest, t.refusedSpread()), 0))
	}
}

// refusedSpread is how much the answers to the last 429s varied by, from
// the wire: how late the service counts a request at random; none before
// two.
func (t *throttle) refusedSpread() time.Duration {
	if len(t.refusedTook) < 2 {
		return 0
	}
	return slices.Max(t.refusedTook) - slices.Min(t.refusedTook)
}

// wakeOne tells the request waiting for the pace, if any, to look again.
func (t *throttle) wakeOne() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// due is when the next request may go: after any pause, and one interval of
// the pace after the last one sent went on the wire, which it waits for
// (for a small bucket, after the service took it, if later: answeredLate);
// before the first 429, once the last one sent is answered, or firstSpacing
// after it. The pace may change while a request waits, so it is read afresh
// each time.
func (t *throttle) due() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := t.pausedUntil
	switch {
	case t.pace != rate.Inf:
		// Let go early by as much as requests usually reach the wire
		// late, so that they reach it one interval apart.
		interval := t.interval()
		at = later(at, t.spacedFrom.Add(interval-min(t.lag, interval/10)))
		if t.unwritten {
			// Looked at again when it is (wrote, landed).
			at = later(at, time.Now().Add(firstSpacing))
		}
	case !t.answered:
		at = later(at, t.lastSent.Add(firstSpacing))
	}
	if t.inFlightCap > 0 && t.inFlight >= t.inFlightCap {
		// Looked at again when one is answered (landed).
		at = later(at, time.Now().Add(firstSpacing))
	}
	if t.kind == fixedWindow && t.known > 0 {
		// A fixed window counts the requests of each wall-clock second
		// (windowEnd): once those let go since this one began and not
		// refused, with this one, are as many as it accepts, wait for the
		// next. Counted by when they were let go, not answered, as a slow
		// answer to a request the last window counted would take a place
		// in this one. The window's first windowMargin still counts
		// as the last one's, for the service's clock, and the last
		// windowMargin before it as this one's, for the way there. Paced
		// just below its count instead, the pace grows past it, and the
		// refused request waits out a Retry-After of a second.
		began := time.Now().Add(-windowMargin).Truncate(time.Second)
		if countAfter(t.letGo, began.Add(-windowMargin)) >= int(t.known) {
			at = later(at, began.Add(throttleWindow+windowMargin))
		}
	}
	if t.kind == rollingWindow && t.known > 0 {
		// A rolling window frees a place as each request it counts
		// turns a second old, and those came as they came, not at the
		// pace: wait for one, with this one counted as taken. Each takes
		// its place when it was let go, and windowMargin more for the way
		// there, not when answered: a slow answer would hold it longer
		// than the service does.
		room := max(int(t.known)-1, 0)
		if n := len(t.letGo); n > room {
			at = later(at, t.letGo[n-1-room].Add(throttleWindow+windowMargin))
		}
	}
	return at
}

// observe learns from one response to a request sent at sent, with busy
// others on the wire when it went (wrote).
//
// A 429 to a request sent before the last event was already in flight when
// the pace was set: it belongs to that event. Any other 429 is a new event,
// and what was accepted since the last one says what to do:
//   - the first event: the pace starts below the rate accepted so far, as the
//     burst inflates it;
//   - something was accepted: the service's limit is at least the accepted
//     rate between the two events (a token bucket emptied at both), and at
//     most about the pace it refused;
//   - nothing was: the service refuses everything for now (a window spent),
//     so every request is held back until it reopens (reopening), and should
//     a probe then be refused too, briefly, then longer, up to Retry-After,
//     without learning a lower pace from it.
func (t *throttle) observe(resp *http.Response, sent time.Time, busy int) {
	now, refused := time.Now(), rateLimited(resp)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.accepted = trimBefore(t.accepted, now.Add(-measureWindow))
	if !sent.Before(t.lastSent) {
		t.answered, t.refusedLast = true, refused
		t.wakeOne()
		if !t.unwritten {
			t.answeredLate(now, refused)
		}
	}

	if !refused {
		t.accepted = append(t.accepted, now)
		full := len(t.busyOK) == busyHistory
		t.busyOK = appendBounded(t.busyOK, wireBusy{now, busy}, busyHistory)
		if full {
			// The 429s counted against them: since the first kept.
			t.busyRefused = slices.DeleteFunc(t.busyRefused, func(w wireBusy) bool { return w.at.Before(t.busyOK[0].at) })
		}
		if t.unsure > 0 && t.enoughToTell(t.unsure) && len(t.busyOK) >= unsureHistory {
			// Enough accepted to tell the 429s taken for the rate too
			// early (below) from a limit on requests in flight.
			if t.refusedInFlight(t.unsure) {
				t.limitInFlight(t.unsure, now)
			}
			t.unsure = 0
		}
		if !sent.Before(t.lastCut) {
			t.sinceCut++ // sent at the pace last set: the service accepts that much
			if t.guess != unknownWindow {
				// The window reopened when guessed: that is its kind.
				t.learnWindow(t.guess, now)
			}
		}
		return
	}
	if i, found := slices.BinarySearchFunc(t.letGo, sent, time.Time.Compare); found {
		// Refused: it takes no place in a window (due).
		t.letGo = slices.Delete(t.letGo, i, i+1)
	}
	wait, ok := retryAfter(resp.Header, now)
	if !ok {
		wait = min(throttleWindow, t.maxWait)
	}
	if !sent.Before(t.firstEvent) {
		// The others of the first event were sent all at once, before
		// anything was paced: they say nothing of what a rate refuses.
		t.busyRefused = appendBounded(t.busyRefused, wireBusy{now, busy}, busyHistory)
	}
	if t.refusedInFlight(busy) {
		t.limitInFlight(busy, now)
		return
	}
	if sent.Before(t.lastCut) {
		return
	}
	switch {
	case t.lastCut.IsZero():
		// The first 429 comes with the burst spent, whatever the limit,
		// and as many in flight as the start sent: not told again.
		t.firstEvent = now
	case busy < 2 || t.enoughToTell(busy):
		// Told a rate (refusedInFlight): so were any 429s before.
		t.unsure = 0
	case t.unsure == 0 || busy < t.unsure:
		// Too few accepted yet to tell: taken for the rate until there
		// are enough, and then told again.
		t.unsure = busy
	}
	pace := t.pace
	next := pace
	switch {
	case t.lastCut.IsZero():
		// The rate accepted so far in the last second, over the time it
		// took, or half a second at least, as a burst spent at once would
		// otherwise pass for many times the rate. When every request of
		// the first moment was refused, nothing was measured: start from
		// one request per slot a second. A bucket of one has told nothing
		// of its rate by then: its climb starts from four times that (32
		// a second by default), a step per request (grow). From twice
		// that, a bucket of 50 a second lost some 80 ms to the climb,
		// against some 30 ms now; one slower than the start refuses the
		// first request paced, and is halved (below), one 429 more.
		span := throttleWindow
		if len(t.accepted) > 0 {
			span = max(now.Sub(later(t.accepted[0], now.Add(-throttleWindow))), throttleWindow/2)
		}
		accepted := countAfter(t.accepted, now.Add(-throttleWindow))
		measured := rate.Limit(float64(accepted) / span.Seconds())
		next = max(firstCut*measured, rate.Limit(cap(t.slots)))
		t.firstBurst = accepted
		t.smallBucket = accepted <= 2
		// Only a bucket of one: one of two, or a window of two, accepts
		// a request closer to the one before than its rate allows. Not
		// with two or more others in flight either: a limit on requests
		// in flight whose answers are slow refuses as early, and is told
		// from a rate by later 429s (refusedInFlight).
		t.byRequest = t.smallBucket && busy <= 1 && t.oneAtATime(now)
		if t.byRequest {
			next = 4 * rate.Limit(cap(t.slots))
		}
	case t.hi > 0 && t.sinceCut > 0:
		// A small bucket refused the pace tried between the one it held
		// and the one it refused: the rate lies below it. Once the two
		// are close, the pace is the one it held.
		t.hi = pace
		next = t.narrowed()
	case t.smallBucket && t.known == 0 && t.sinceCut > 0 && busy <= 1:
		// A bucket of one or two refused its first climb, which it
		// accepted a step before: its rate lies between the two steps,
		// however soon this came, and is narrowed down between them. Not
		// with more in flight: a limit on requests in flight whose
		// answers are slow also refuses early, and more than its rate.
		t.lo, t.hi = pace/fastGrowth, pace
		next = t.narrowed()
	case now.Sub(t.lastCut) < minInterval && t.sinceCut >= jitterRun && t.smallBucket:
		// A bucket of one or two refuses every other request paced
		// faster than its rate, so one refused after a run of accepted
		// ones came too close to the one before by scheduling's jitter:
		// step back by the settling margin only, below the rate it was
		// found to accept (below).
		t.known = max(t.known, pace)
		next = settle * t.known
	case now.Sub(t.lastCut) < minInterval && t.sinceCut > 0:
		// Too soon to measure anything, but the pace just set is still
		// too fast: lower it a step, and go on measuring from the event.
		t.known, t.cutEarly = pace*earlyCut/settle, true
		t.setLimit(pace*earlyCut, now)
		return
	case t.smallBucket && t.known == 0 && t.sinceCut == 0 && !t.windowed && pace > 1 && len(t.accepted) > 0 && busy <= 1:
		// A bucket of one or two refused the request paced after the
		// last event: its rate lies below the pace the climb starts
		// from, or this is a window spent. Halved, down to one request
		// a second: a slow bucket then accepts, and climbs from there,
		// and a window of a request or two a second, spent for the rest
		// of its second, is held back as one from then on. A service
		// that has accepted nothing lately is refusing everything: held
		// back at once. Not with two or more others in flight, as a
		// limit on requests in flight refuses everything while full.
		next = pace / 2
	case t.sinceCut == 0:
		// Held back for a probe's time, doubling, and no longer than
		// Retry-After; should that go on, the pace is halved too. The
		// first time, this is a window spent: held until it reopens,
		// and paced from then on below what it accepted in the last
		// second, rather than climbing from the first estimate to spend
		// the next one early.
		t.blocked++
		hold := now.Add(min(wait, probeGap<<min(t.blocked-1, 4)))
		switch {
		case !t.windowed:
			t.windowed = true
			hold = t.reopening(now, wait, ok)
			if n := t.spent[t.guessedKind()]; n > 0 {
				t.known = rate.Limit(n)
				next = settle * t.known
			}
		case t.guess != unknownWindow:
			// Probed when the window would have reopened had it been of
			// the kind guessed, and refused: it is of the other kind.
			t.learnWindow(otherWindow(t.guess), now)
			hold = t.otherwise
			next = t.pace
		}
		if t.blocked > 2 {
			next = pace / 2
		}
		if hold.Sub(now) <= t.maxWait {
			t.pausedUntil = later(t.pausedUntil, hold)
		}
	default:
		t.blocked = 0
		// Over two seconds at most: further back, the pace was likelier
		// still below the limit, and a bucket full and wasting; over much
		// less, what a bucket saved up while requests paused would count
		// as rate.
		from := later(t.lastCut, now.Add(-measureWindow))
		measured := rate.Limit(float64(countAfter(t.accepted, from)) / now.Sub(from).Seconds())
		if t.windowed {
			// A window (it has refused everything for a while), spent
			// again: hold every request back at once until it reopens,
			// rather than after a probe is refused too. Its limit is also
			// what it accepted as its kind counts, however long ago the
			// last event was, since the time since then holds the
			// window's idle rest. An overstatement is soon corrected by
			// the next event; an understatement would hold the pace low.
			t.pausedUntil = later(t.pausedUntil, t.reopening(now, wait, ok))
			measured = max(measured, rate.Limit(t.spent[t.guessedKind()]))
		} else if t.known == 0 || pace < settle*t.known {
			// Refused while climbing quickly. A bucket of one or two
			// refuses a step above its rate almost at once, so its rate
			// lies between the two steps, and is narrowed down by trying
			// the pace between them (narrow). A larger one may have
			// accepted the step before on its burst alone: its rate is
			// what it accepted since it was last empty, and what it
			// wasted while full, if the pace climbed from below its rate
			// (refilled), and no more than the pace it refused. Taken for
			// the step before instead, it is paced above its rate, refused
			// again within minInterval, and cut each time (earlyCut) to
			// wherever the cuts fall.
			if t.smallBucket {
				measured = max(measured, pace/fastGrowth)
				t.lo, t.hi = measured, pace
			} else {
				measured = min(t.refilled(from, now), pace)
			}
		} else if t.smallBucket {
			// A bucket of one or two refuses two requests that scheduling
			// brought closer together than its rate, even below it, and
			// whatever rate was offered: only step back by the settling
			// margin, and below the rate it was found to accept, not the
			// pace: on a busy machine such 429s come every second or two,
			// and stepping back from each pace took the last down by 3%
			// each time, 14% in a plan. One that lowered its limit refuses
			// again within minInterval, and the early cut follows it down.
			measured = max(measured, pace, t.known)
		}
		t.known = measured
		next = settle * t.known
		if t.hi > 0 {
			next = t.narrowed()
		}
	}
	t.lastCut, t.sinceCut, t.cutEarly = now, 0, false
	t.setLimit(min(next, t.ceiling), now)
	// The refused request waits out Retry-After itself (backoff); the
	// others are held back too for a pause longer than a rounding. A pause
	// longer than the provider waits fails the request at once (checkRetry)
	// and must not stall the others meanwhile.
	if wait > roundingPause && wait <= t.maxWait {
		t.pausedUntil = later(t.pausedUntil, now.Add(wait))
	}
}

// refilled is the rate of a token bucket empty at from and again at now:
// the requests it accepted in between (answered then: t.accepted), and what
// it wasted, as it refilled past its burst while the pace was below its
// rate. That depends on the rate, so it is found as the least rate that
// accounts for itself, from the one measured (accepted over the span) up:
// never less than that. The burst is taken as what was accepted before the
// first 429 (firstBurst): no less than the burst, as the bucket also
// refilled meanwhile, so the waste found is no more than the bucket's, nor
// the rate.
func (t *throttle) refilled(from, now time.Time) rate.Limit {
	ts := timesAfter(t.accepted, from)
	span := now.Sub(from).Seconds()
	burst := float64(max(t.firstBurst, 1))
	r := float64(len(ts)) / span
	for range 16 {
		level, wasted, at := 0.0, 0.0, from
		for _, ti := range ts {
			level += r * ti.Sub(at).Seconds()
			if level > burst {
				wasted += level - burst
				level = burst
			}
			level, at = max(level-1, 0), ti
		}
		next := (float64(len(ts)) + wasted) / span
		if next < 1.001*r {
			break
		}
		r = next
	}
	return rate.Limit(r)
}

// oneAtATime tells whether the service took the requests it accepted in
// the last second one at a time, as a bucket of one does: each followed the
// one before by more than twice as long as the one refused, answered at now,
// followed the last. A bucket of two, or a window, accepts two in a row as
// closely as it then refuses the third.
func (t *throttle) oneAtATime(now time.Time) bool {
	ts := timesAfter(t.accepted, now.Add(-throttleWindow))
	if len(ts) == 0 {
		return true
	}
	refusedAfter := now.Sub(ts[len(ts)-1])
	for i := 1; i < len(ts); i++ {
		if ts[i].Sub(ts[i-1]) <= 2*refusedAfter {
			return false
		}
	}
	return true
}

// limitInFlight takes the service for one that limits requests in flight
// rather than their rate, to no more than busy at once, which are all that
// are sent from then on. What was learnt from the 429s before, which were
// the same, is undone: should the service also limit the rate, the next 429
// tells, as a first one.
func (t *throttle) limitInFlight(busy int, now time.Time) {
	if t.inFlightCap == 0 {
		t.known, t.lo, t.hi, t.smallBucket, t.byRequest = 0, 0, 0, false, false
		t.windowed, t.kind, t.guess, t.blocked = false, unknownWindow, unknownWindow, 0
		t.lastCut, t.sinceCut = time.Time{}, 0
		t.setLimit(t.ceiling, now)
	}
	if t.inFlightCap == 0 || busy < t.inFlightCap {
		t.inFlightCap = busy
	}
	t.unsure = 0
}

// wireBusy is, for one request, when its answer came, and how many others
// were on the wire when it went (wrote).
type wireBusy struct {
	at   time.Time
	busy int
}

// refusedInFlight tells whether a 429 to a request that went on the wire
// with busy others there is the service limiting requests in flight rather
// than their rate: at least two others were, and of the requests that went
// with as many since the first of the last ones accepted (enough of them),
// more were refused than accepted; or a limit was learnt, and the request
// was let go before, with as many as it allows.
//
// A rate refuses requests whatever else is in flight: of those that went
// with many others, as small a share as of the rest, far fewer than it
// accepts. A limit on requests in flight refuses every one of them, but for
// the few counted with an answer that had come and not yet been read, on a
// busy machine.
func (t *throttle) refusedInFlight(busy int) bool {
	switch {
	case t.inFlightCap > 0 && busy >= t.inFlightCap:
		return true
	case busy < 2 || !t.enoughToTell(busy):
		return false
	}
	return withAtLeast(t.busyRefused, busy) > withAtLeast(t.busyOK, busy)
}

// enoughToTell tells whether enough requests were accepted to tell a 429
// with busy others on the wire (refusedInFlight): busyToTell per other.
func (t *throttle) enoughToTell(busy int) bool {
	return len(t.busyOK) >= busyToTell*busy
}

// withAtLeast counts the requests that went with busy others or more.
func withAtLeast(ws []wireBusy, busy int) int {
	n := 0
	for _, w := range ws {
		if w.busy >= busy {
			n++
		}
	}
	return n
}

// appendBounded appends v to s, dropping the oldest first if s holds n.
func appendBounded[T any](s []T, v T, n int) []T {
	if len(s) >= n {
		s = append(s[:0], s[len(s)-n+1:]...)
	}
	return append(s, v)
}

// A window the service counts requests in: fixed windows per wall-clock
// second (or minute, or hour), rolling ones over the last second, whenever
// it began. Which one a service uses is learnt from the first probe.
type windowKind int

const (
	unknownWindow windowKind = iota
	fixedWindow
	rollingWindow
)

// guessedKind is the window's kind, or while a probe tells, the one
// guessed; rolling if neither (its count is the last second's).
func (t *throttle) guessedKind() windowKind {
	switch {
	case t.kind != unknownWindow:
		return t.kind
	case t.guess != unknownWindow:
		return t.guess
	}
	return rollingWindow
}

// learnWindow records the window's kind, and paces at what such a window
// accepted when it was found spent, each request waiting for a place in it
// (due).
func (t *throttle) learnWindow(k windowKind, now time.Time) {
	t.kind, t.guess = k, unknownWindow
	if n := t.spent[k]; n > 0 {
		t.known = rate.Limit(n)
		t.setLimit(min(t.known, t.ceiling), now)
	}
}

func otherWindow(k windowKind) windowKind {
	if k == fixedWindow {
		return rollingWindow
	}
	return fixedWindow
}

// reopening is when a window spent at now reopens: a fixed one at the
// wall-clock second Retry-After points to (windowEnd), a rolling one a
// second after the oldest request it still counts. Until a probe has told
// which kind the service uses, it is the earlier of the two, and the later
// one is kept for when that probe is refused: at most one 429 more, once.
//
// It also counts what the window accepted, as each kind would have it: a
// fixed one since the wall-clock second it began, within the last second; a
// rolling one over the last second, which for a fixed window spent early
// would count the previous window's requests too.
func (t *throttle) reopening(now time.Time, wait time.Duration, ok bool) time.Time {
	fixed := now.Add(min(wait, probeGap))
	n := countAfter(t.accepted, now.Add(-throttleWindow))
	t.spent[rollingWindow], t.spent[fixedWindow] = n, n
	if ok {
		fixed = windowEnd(now, wait)
		began := fixed.Add(-windowMargin - throttleWindow)
		t.spent[fixedWindow] = countAfter(t.accepted, later(began, now.Add(-throttleWindow)))
	}
	t.guess = unknownWindow
	if n == 0 || t.kind == fixedWindow || wait > roundingPause {
		// A longer Retry-After is a pause, held as asked: a probe after
		// it tells nothing of the window's kind.
		return fixed
	}
	rolling := t.accepted[len(t.accepted)-n].Add(throttleWindow + windowMargin)
	switch {
	case t.kind == rollingWindow:
		return rolling
	case rolling.Before(fixed):
		t.guess, t.otherwise = rollingWindow, fixed
		return rolling
	default:
		t.guess, t.otherwise = fixedWindow, rolling
		return fixed
	}
}

// windowEnd is when a fixed window spent at now reopens, given the
// Retry-After it sent. Fixed windows are counted per whole wall-clock second
// (or minute, or hour) and Retry-After is rounded up to whole seconds, so
// the window ends at the last whole second up to now plus Retry-After; an
// HTTP date names that second. A little later, for the service's clock; and
// if that second is already past, after a probe's time.
func windowEnd(now time.Time, wait time.Duration) time.Time {
	end := now.Add(wait).Truncate(time.Second)
	if !end.After(now) {
		return now.Add(min(wait, probeGap))
	}
	return end.Add(windowMargin)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// grow raises the pace by one step when a step's time has passed since the
// last change and the requests kept up with the pace: quickly below the
// rate the service last accepted, gently around it. It runs as requests
// wait for the pace, so that a pace set too low recovers even when few
// responses come back, and never by more than one step at once: after a
// quiet spell (requests sleeping out a Retry-After) the pace must not jump.
// A small bucket climbs in shorter steps, as it has no burst to accept a
// step above its rate for a while, and its first climb a step per request
// if it can (byRequest); while its rate is narrowed down, that is done
// instead (narrow).
func (t *throttle) grow(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at := t.stepDue(); at.IsZero() || now.Before(at) {
		return
	}
	limit := t.pace
	step := now.Sub(t.stepStart)
	if t.hi > 0 {
		t.narrow(now, step)
		return
	}
	if t.byRequest && t.known == 0 {
		// A bucket of one climbs a step per request accepted: it
		// accepts a request that follows the one before by a pace's
		// interval only if its rate is at least that pace, so the pace
		// grows once the last request, due at it, was accepted. Not
		// one due later, as when the one before was answered late
		// (answeredLate): the bucket took it at a slower pace; nor one
		// that followed a refused request, as the bucket counts from the
		// one it took before that (atPace). Steps of
		// time would hold less than a request each at the slow paces the
		// climb starts from, and take a pace none was sent at for one the
		// bucket accepted.
		if t.sent > 0 && t.answered && t.atPace {
			t.setLimit(min(limit*fastGrowth, t.ceiling), now)
		}
		return
	}
	// A pace the requests do not keep up with is not what holds them back:
	// raising it would only take it further from what the service was seen
	// to accept.
	binding := t.keptUp(step)
	t.stepStart, t.sent = now, 0
	if !binding {
		return
	}
	factor := rate.Limit(fastGrowth)
	if t.known > 0 && limit >= settle*t.known {
		// Around the rate last accepted, probe gently, then less so the
		// longer the service keeps accepting: its limit may have risen, or
		// the last measure fallen short of it. A rate measured (what a
		// bucket refilled between two 429s, a small bucket's narrowed
		// down, a window's count) is within a few percent, and each time
		// a probe finds it again, a request waits out a Retry-After, in a
		// plan's last second its end: a bucket's pace grows after the
		// short quiet only to just under its rate (heldMargin), as a small
		// bucket's is held, and past that after four times the quiet, as
		// a small bucket's and a window's are. Probed after the short
		// quiet alone, a bucket of ten at 50 a second refused again in
		// one plan in three or four, some 5 s into a plan of 6. A rate
		// guessed by an early cut is not measured: probed after the short
		// quiet.
		bucket := !t.smallBucket && t.kind == unknownWindow
		below := !t.cutEarly && limit < heldMargin*t.known // and grows up to that
		wait := 4 * quietBeforeProbing
		if bucket && (t.cutEarly || below) {
			wait = quietBeforeProbing
		}
		quiet := now.Sub(t.lastCut) - wait
		if quiet < 0 {
			return
		}
		factor = 1 + rate.Limit(slowGrowth*math.Exp2(min(quiet, 16*time.Second).Seconds()/2))
		if t.kind != unknownWindow {
			// A window's count, which each request waits for a place in
			// (due), grows with the pace: learnt from a second that
			// accepted few requests, it would otherwise hold every
			// request to it for good, as only a 429 changes it, and none
			// comes while requests wait for places.
			t.known = max(t.known, min(limit*factor, t.ceiling))
		}
		if bucket && below {
			factor = min(factor, heldMargin*t.known/limit)
		}
	}
	t.setLimit(min(limit*factor, t.ceiling), now)
}

// nextStep is when grow may next change the pace; zero when it will not.
func (t *throttle) nextStep() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stepDue()
}

// stepDue is when the step begun at stepStart ends, and grow may change the
// pace: after narrowHold, or narrowRequests intervals of the pace if that
// is longer, while a small bucket's rate is narrowed down; else (below the
// ceiling) after half a step in the first climb, a quarter for a small
// bucket, at once for one climbed a step per request (byRequest, grow), a
// full one once a rate was measured; zero when it will not.
func (t *throttle) stepDue() time.Time {
	switch {
	case t.hi > 0:
		return t.stepStart.Add(max(narrowHold, narrowRequests*t.interval()))
	case t.pace >= t.ceiling:
		return time.Time{}
	case t.known > 0:
		return t.stepStart.Add(growthStep)
	case t.byRequest:
		return t.stepStart
	case t.smallBucket:
		return t.stepStart.Add(growthStep / 4)
	}
	return t.stepStart.Add(growthStep / 2)
}

// narrow takes a pace a small bucket held for a step (grow calls it once
// one is over, stepDue), while it held requests back, as below its
// rate, and tries the one between it and the pace refused; once the two are
// close, it keeps the one held, and grows from there as from any other rate
// it accepted.
func (t *throttle) narrow(now time.Time, step time.Duration) {
	if !t.keptUp(step) {
		t.stepStart, t.sent = now, 0
		return
	}
	t.lo = t.pace
	t.setLimit(min(t.narrowed(), t.ceiling), now)
}

// keptUp tells whether the requests sent over the step kept up with the
// pace, give or take one: at a slow pace, a step holds less than two of its
// intervals.
func (t *throttle) keptUp(step time.Duration) bool {
	return float64(t.sent+1) >= 0.9*float64(t.pace)*step.Seconds()
}

// narrowed is the pace to try next while a small bucket's rate is narrowed
// down: the one between the paces it held and refused. Once those are
// close, the narrowing is over, and the rate is the pace it held. That pace
// already lies below the rate by the margin the requests' timing needs
// (the one above it was refused), so the pace stays just under it, by
// heldMargin, not by the settling margin of a rate measured.
func (t *throttle) narrowed() rate.Limit {
	if t.hi < narrowEnough*t.lo {
		t.known, t.lo, t.hi = t.lo, 0, 0
		return heldMargin * t.known
	}
	t.known = t.hi
	return rate.Limit(math.Sqrt(float64(t.lo * t.hi)))
}

// interval is the time between two requests at the pace; the pace must not
// be rate.Inf.
func (t *throttle) interval() time.Duration {
	return time.Duration(float64(time.Second) / float64(t.pace))
}

func (t *throttle) setLimit(l rate.Limit, now time.Time) {
	t.pace = max(l, 0.1)
	t.stepStart, t.sent = now, 0
}

// countAfter counts the times after from in the sorted slice ts.
func countAfter(ts []time.Time, from time.Time) int {
	return len(ts) - sort.Search(len(ts), func(i int) bool { return ts[i].After(from) })
}

// timesAfter is the end of the sorted slice ts after from.
func timesAfter(ts []time.Time, from time.Time) []time.Time {
	return ts[len(ts)-countAfter(ts, from):]
}

// trimBefore drops the times before cutoff from the sorted slice ts. It
// runs for every request (acquire, observe), so it reslices rather than
// copying those kept; appending to the result reuses the space after them,
// and the space before is given up when append next grows the slice.
func trimBefore(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cutoff) {
		i++
	}
	return ts[i:]
}

// throttledTransport puts every attempt through the quota the service
// announces (pace.Gate) and the throttle.
type throttledTransport struct {
	next     http.RoundTripper
	quota    *pace.Gate
	throttle *throttle
	redactor *Redactor
}

func (t *throttledTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.quota.Wait(req.Context()); err != nil {
		return nil, err
	}
	var header http.Header
	defer func() { t.quota.Done(header) }()
	release, sent, busy, err := t.throttle.acquire(req.Context())
	if err != nil {
		return nil, err
	}
	// The transport may report the request written after it has returned
	// the response: counted on the wire only until it lands, and once.
	var mu sync.Mutex
	written, done := false, false
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) {
			mu.Lock()
			defer mu.Unlock()
			if !done {
				written, busy = true, t.throttle.wrote(sent)
			}
		},
	}))
	resp, err := t.next.RoundTrip(req)
	mu.Lock()
	done = true
	t.throttle.landed(sent, written)
	mu.Unlock()
	logAttempt(req, resp, err, time.Since(sent), t.redactor)
	if err != nil {
		release()
		return nil, err
	}
	if resp.StatusCode < 300 {
		// A quota is read from the answers it accepted, which a service
		// announcing one sends with every one. A refusal's reset, often
		// a rounding of a much shorter wait, holds only the refused
		// request, whose retry waits for it.
		header = resp.Header
	}
	t.throttle.observe(resp, sent, busy)
	// The request stays in flight until its body has been read.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: sync.OnceFunc(release)}
	return resp, nil
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}
