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
//   - holds every request back while the service has asked for a pause
//     (Retry-After on a 429), not only the one that was refused,
//   - and, after the first 429, paces requests at the rate the service was
//     seen to accept, creeping back up while it keeps accepting them.
//
// A user-set requests-per-second ceiling caps the pace from the start.
type throttle struct {
	slots   chan struct{}
	ceiling rate.Limit // rate.Inf when the user set none
	maxWait time.Duration

	mu           sync.Mutex
	limiter      *rate.Limiter
	pausedUntil  time.Time
	lastChange   time.Time // of the pace, either way
	lastDecrease time.Time
	accepted     []time.Time // times of accepted requests within the last window
}

const (
	throttleWindow  = time.Second
	throttleBackoff = 0.7  // multiplicative decrease on a further 429
	throttleGrowth  = 1.05 // multiplicative increase per window without one
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
		if t.limiter.Limit() < t.ceiling && now.Sub(t.lastChange) >= throttleWindow {
			t.setLimit(min(t.limiter.Limit()*throttleGrowth, t.ceiling), now)
		}
		return
	}

	// 429s that arrive within one window of the last decrease belong to the
	// same event: those requests were already in flight. Only a new event
	// lowers the pace: the first to the rate just seen accepted, later ones
	// by a constant factor.
	if now.Sub(t.lastDecrease) >= throttleWindow {
		t.lastDecrease = now
		next := t.limiter.Limit() * throttleBackoff
		if t.limiter.Limit() == rate.Inf {
			next = rate.Limit(max(len(t.accepted), 1)) / rate.Limit(throttleWindow.Seconds())
		}
		t.setLimit(min(next, t.ceiling), now)
	}
	wait, ok := retryAfter(resp.Header, now)
	if !ok {
		wait = min(throttleWindow, t.maxWait)
	}
	if wait <= t.maxWait {
		// A longer Retry-After fails the request at once (checkRetry); it
		// must not stall the others meanwhile.
		if until := now.Add(wait); until.After(t.pausedUntil) {
			t.pausedUntil = until
		}
	}
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
