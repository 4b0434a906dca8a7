package client

import (
	"context"
	"crypto/tls"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryableStatus is what the service answers when it is rate limiting (429)
// or briefly unavailable behind a gateway (502, 503, 504). The body does not
// matter: a proxy's HTML page is still an outage.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfterTooLong is returned by checkRetry so that the request fails at
// once, naming the time to try again, instead of stalling the plan.
type retryAfterTooLong struct{ at time.Time }

func (e *retryAfterTooLong) Error() string {
	return "Retry-After is " + time.Until(e.at).Round(time.Second).String()
}

// checkRetry decides, after each attempt, whether to try again.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return retryableTransportError(err), err
	}
	if !retryableStatus(resp.StatusCode) {
		return false, nil
	}
	if wait, ok := retryAfter(resp.Header, time.Now()); ok && wait > c.cfg.MaxWait {
		return false, &retryAfterTooLong{at: time.Now().Add(wait)}
	}
	return true, nil
}

// retryableTransportError: dropped connections, resets and timeouts of one
// attempt are worth another; a refused redirect, an oversized body or a
// certificate problem is not.
func retryableTransportError(err error) bool {
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, ErrOffHost), errors.Is(err, ErrBodyTooLarge), errors.As(err, &certErr),
		errors.Is(err, context.DeadlineExceeded): // the throttle's wait would outlast the deadline
		return false
	case strings.Contains(err.Error(), "stopped after"), strings.Contains(err.Error(), "unsupported protocol scheme"):
		return false
	}
	return true
}

// backoff honours Retry-After when the service sends it, and otherwise waits
// exponentially longer with full jitter, so that many clients that failed
// together do not come back together.
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := retryAfter(resp.Header, time.Now()); ok {
			return min(wait, maxWait)
		}
	}
	ceiling := float64(minWait) * math.Pow(2, float64(attempt))
	if ceiling > float64(maxWait) || math.IsInf(ceiling, 0) {
		ceiling = float64(maxWait)
	}
	floor := float64(minWait) / 2
	return time.Duration(floor + rand.Float64()*(ceiling-floor))
}

// retryAfter reads a Retry-After header given in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) {
			return 0, false
		}
		return time.Duration(min(secs, 1e6) * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
