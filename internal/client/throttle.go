package client

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Some services of this kind revoke a token that keeps hitting the rate
// limit, so the client never hammers: every attempt (retries and redirects
// included) passes through one throttle per provider block, which
//   - caps the requests in flight,
//   - after the service's first 429, paces requests at the rate it was seen
//     to accept, and follows that rate up while the service keeps accepting
//     and down when it refuses again,
//   - and holds every request back while the service asks for a real pause
//     (a Retry-After longer than a rounding), not only the one refused.
//
// Services limit with token buckets (a rate, and a burst they allow on top)
// or fixed windows, and round Retry-After up to whole seconds, so a 429 says
// little about how long to wait: "Retry-After: 1" often means 20 ms. The
// first 429 comes when the burst is spent, so the rate accepted until then
// overstates the limit by the burst: the pace starts below it and grows
// quickly until the next 429, which is measured over a window the burst no
// longer fills; from then on it grows gently around that rate.
//
// A user-set requests-per-second ceiling caps the pace from the start.
type throttle struct {
	slots   chan struct{}
	ceiling rate.Limit // rate.Inf when the user set none
	maxWait time.Duration

	mu          sync.Mutex
	limiter     *rate.Limiter
	pausedUntil time.Time
	lastEvent   time.Time   // of the last 429 that lowered the pace
	lastChange  time.Time   // of the last change of the pace, either way
	known       rate.Limit  // the rate accepted when the service last refused; 0 before
	accepted    []time.Time // times of accepted requests within the last window
	refused     []time.Time // times of 429s within the last window
}

const (
	throttleWindow = time.Second            // over which the accepted rate is measured
	eventGap       = 250 * time.Millisecond // 429s closer than this are one event (already in flight)
	stormCount     = 4                      // 429s within a window that make every request wait out Retry-After
	growthStep     = 200 * time.Millisecond // between increases
	firstCut       = 0.7                    // of the rate accepted until the first 429, burst included
	settle         = 0.95                   // of the rate accepted when the service refused
	fastGrowth     = 1.25                   // per step, below settle × known
	slowGrowth     = 1.01                   // per step, around known
	roundingPause  = 2 * time.Second        // a Retry-After up to this is a rounding, not a pause
)

func newThrottle(maxConcurrent int, requestsPerSecond float64, maxWait time.Duration) *throttle {
	ceiling := rate.Inf
	if requestsPerSecond > 0 {
		ceiling = rate.Limit(requestsPerSecond)
	}
	return &throttle{
		slots:   make(chan struct{}, maxConcurrent),
		ceiling: ceiling,
		maxWait: maxWait,
		limiter: rate.NewLimiter(ceiling, 1),
	}
}

// acquire waits for a slot, for any pause the service asked for, and for the
// pace; it returns early with the context's error.
func (t *throttle) acquire(ctx context.Context) (release func(), err error) {
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release = func() { <-t.slots }
	for {
		t.mu.Lock()
		wait := time.Until(t.pausedUntil)
		limiter := t.limiter
		t.mu.Unlock()
		if wait <= 0 {
			t.grow(time.Now())
			if err := pace(ctx, limiter); err != nil {
				release()
				return nil, err
			}
			return release, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			release()
			return nil, ctx.Err()
		}
	}
}

// pace waits for the limiter. A wait that would outlast the context's
// deadline fails at once, as the deadline it is.
func pace(ctx context.Context, limiter *rate.Limiter) error {
	r := limiter.Reserve()
	delay := r.Delay()
	if delay == 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
		r.Cancel()
		return errWaitOutlastsDeadline
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}

// observe learns from one response.
func (t *throttle) observe(resp *http.Response) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.accepted = trimBefore(t.accepted, now.Add(-throttleWindow))

	if resp.StatusCode != http.StatusTooManyRequests {
		t.accepted = append(t.accepted, now)
		return
	}

	t.refused = append(trimBefore(t.refused, now.Add(-throttleWindow)), now)
	// 429s within eventGap of the last decrease belong to the same event:
	// those requests were already in flight.
	if now.Sub(t.lastEvent) >= eventGap {
		// Over a whole window, even early on: a burst spent in a quarter of
		// a second counts once, as one second's worth, not four.
		measured := rate.Limit(float64(len(t.accepted)) / throttleWindow.Seconds())
		next := settle * measured
		if t.limiter.Limit() == rate.Inf {
			// When every request of the first moment was refused, nothing
			// was measured: start from one request per slot a second.
			next = max(firstCut*measured, rate.Limit(cap(t.slots)))
		} else if measured > 0 {
			t.known = measured
		} else {
			next = t.limiter.Limit() / 2 // nothing accepted for a window: halve
		}
		t.lastEvent = now
		t.setLimit(min(next, t.ceiling), now)
	}
	// The refused request waits out Retry-After itself (backoff). Others
	// are held back too for a pause longer than a rounding, and whenever
	// 429s come thick (the pace is far off, a storm must not go on); without
	// Retry-After, for a window. A pause longer than the provider waits fails
	// the request at once (checkRetry) and must not stall the others meanwhile.
	wait, ok := retryAfter(resp.Header, now)
	if !ok {
		wait = min(throttleWindow, t.maxWait)
	}
	if (wait > roundingPause || len(t.refused) >= stormCount) && wait <= t.maxWait {
		if until := now.Add(wait); until.After(t.pausedUntil) {
			t.pausedUntil = until
		}
	}
}

// grow raises the pace by one step when a step's time has passed without a
// 429 since the last change: quickly below the rate the service last
// accepted, gently around it. It runs as requests wait for the pace, so that
// a pace set too low recovers even when few responses come back, and never
// by more than one step at once: after a quiet spell (requests sleeping out
// a Retry-After) the pace must not jump.
func (t *throttle) grow(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.limiter.Limit()
	if limit >= t.ceiling || now.Sub(t.lastChange) < growthStep || now.Sub(t.lastEvent) < growthStep {
		return
	}
	factor := rate.Limit(fastGrowth)
	if t.known > 0 && limit >= settle*t.known {
		factor = slowGrowth
	}
	t.setLimit(min(limit*factor, t.ceiling), now)
}

func (t *throttle) setLimit(l rate.Limit, now time.Time) {
	t.limiter.SetLimitAt(now, max(l, 0.1))
	t.lastChange = now
}

// trimBefore drops the times before cutoff from the sorted slice ts.
func trimBefore(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cutoff) {
		i++
	}
	return append(ts[:0], ts[i:]...)
}

// throttledTransport puts every attempt through the throttle.
type throttledTransport struct {
	next     http.RoundTripper
	throttle *throttle
	redactor *Redactor
}

func (t *throttledTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	release, err := t.throttle.acquire(req.Context())
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	logAttempt(req, resp, err, time.Since(start), t.redactor)
	if err != nil {
		release()
		return nil, err
	}
	t.throttle.observe(resp)
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
