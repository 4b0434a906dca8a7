package client

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
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

// rateLimited tells a rate limit's answer: a 429, or a 403 that says it is
// one, as some services answer for theirs (GitHub's, and Google's older
// APIs): with a Retry-After, or with a rate-limit header saying that no
// requests remain. Any other 403 is the token's.
func rateLimited(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		return strings.TrimSpace(resp.Header.Get("Retry-After")) != "" || noneRemain(resp.Header)
	}
	return false
}

// noneRemain tells whether a rate-limit header (rateLimitResets' families)
// says that no requests remain.
func noneRemain(h http.Header) bool {
	for _, r := range rateLimitResets {
		if _, remaining := r.values(h); remaining == "0" {
			return true
		}
	}
	return false
}

// retryAfterTooLong is returned by checkRetry so that the request fails at
// once, naming the time to try again, instead of stalling the plan.
type retryAfterTooLong struct {
	at     time.Time
	header string // Retry-After, or the rate-limit reset header read instead
	raw    string // the header's value, shown as it is when absurd
}

func (e *retryAfterTooLong) Error() string {
	return e.header + ": " + e.raw
}

// checkRetry decides, after each attempt, whether to try again.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		switch kind := classifyTransportError(ctx, err); kind {
		case ErrUnavailable, ErrNoAnswer:
			return true, err
		case ErrRefused:
			// A service restarting refuses connections for a moment; nothing
			// listening refuses them for good, so only a few tries.
			_, refused, _, _ := attemptLogFrom(ctx).snapshot()
			return refused < maxRefused, err
		}
		return false, err
	}
	if !retryableStatus(resp.StatusCode) && !rateLimited(resp) {
		return false, nil
	}
	if p, ok := pauseFrom(resp.Header, time.Now()); ok && p.wait > c.cfg.MaxWait {
		return false, &retryAfterTooLong{at: time.Now().Add(p.wait), header: p.header, raw: p.raw}
	}
	return true, nil
}

// maxRefused is how many refused connections end a read.
const maxRefused = 3

// errWaitOutlastsDeadline is the throttle's answer when the pace or a pause
// the service asked for would outlast the read's deadline.
var errWaitOutlastsDeadline = fmt.Errorf("waiting for the rate limit would outlast request_timeout_seconds: %w", context.DeadlineExceeded)

// errRedirectLoop is checkRedirect's answer to a loop.
var errRedirectLoop = errors.New("redirected in a loop")

// classifyTransportError names what went wrong when no response arrived.
// Only ErrUnavailable (a dropped or reset connection), ErrNoAnswer (no
// response headers within the per-attempt limit) and ErrRefused are worth
// another attempt; the rest cannot work however often they are tried.
func classifyTransportError(ctx context.Context, err error) error {
	var (
		certErr   *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
		dnsErr    *net.DNSError
	)
	switch {
	case errors.Is(err, ErrOffHost):
		return ErrOffHost
	case errors.Is(err, ErrBodyTooLarge):
		return ErrBodyTooLarge
	case errors.Is(err, errRedirectLoop):
		return ErrRedirectLoop
	case errors.As(err, &certErr), errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &invalid):
		return ErrTLS
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return ErrSchemeMismatch
	case errors.As(err, &dnsErr):
		return ErrDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, errWaitOutlastsDeadline), ctx.Err() != nil:
		return ErrTimeout
	case strings.Contains(err.Error(), "timeout awaiting response headers"):
		return ErrNoAnswer
	}
	return ErrUnavailable
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

// retryAfter reads how long the service asks to wait (pauseFrom).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	p, ok := pauseFrom(h, now)
	return p.wait, ok
}

// pause is how long a service asked to wait, and the header that said so.
type pause struct {
	wait        time.Duration
	header, raw string
}

// pauseFrom reads a Retry-After header given in seconds or as an HTTP date.
// A value that is neither, or negative, is as good as absent. An absurd one
// (years away) is kept, capped, so that the request fails at once and shows
// the value as it is.
//
// Without a Retry-After, many services say when their rate limit resets
// instead (rateLimitResets); that is read the same way, provided the same
// family of headers does not say that requests remain, in which case the
// reset is that of another limit than the one refusing.
func pauseFrom(h http.Header, now time.Time) (pause, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if wait, ok := secondsOrTime(v, now, true); ok {
			return pause{wait, "Retry-After", v}, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return pause{waitUntil(at, now), "Retry-After", v}, true
		}
		return pause{}, false
	}
	for _, r := range rateLimitResets {
		reset, remaining := r.values(h)
		if reset == "" || remaining != "" && remaining != "0" {
			continue
		}
		if wait, ok := secondsOrTime(reset, now, r.after); ok {
			return pause{wait, r.reset, strings.TrimSpace(h.Get(r.reset))}, true
		}
	}
	return pause{}, false
}

// rateLimitResets are the headers services send, without a Retry-After, to
// say when their rate limit resets, each with the header of its family
// that says how many requests remain.
var rateLimitResets = []rateLimitFamily{
	{"RateLimit", "", true},                                    // IETF draft, structured
	{"RateLimit-Reset", "RateLimit-Remaining", true},           // IETF draft, earlier
	{"X-RateLimit-Reset-After", "X-RateLimit-Remaining", true}, // Discord
	{"X-RateLimit-Reset", "X-RateLimit-Remaining", false},      // GitHub, GitLab, Okta, many
	{"X-Rate-Limit-Reset", "X-Rate-Limit-Remaining", false},    // Twitter
}

type rateLimitFamily struct {
	reset, remaining string
	after            bool // always seconds from now, never a time
}

// values reads the family's reset and how many requests remain, each ""
// when not sent.
func (r rateLimitFamily) values(h http.Header) (reset, remaining string) {
	reset, remaining = strings.TrimSpace(h.Get(r.reset)), strings.TrimSpace(h.Get(r.remaining))
	if r.reset == "RateLimit" {
		// The structured form: limit=10, remaining=0, reset=5, or
		// "default";r=0;t=5 in later drafts.
		fields := structuredParams(reset)
		reset, remaining = cmp.Or(fields["reset"], fields["t"]), cmp.Or(fields["remaining"], fields["r"])
	}
	return reset, remaining
}

// secondsOrTime reads a wait as seconds from now, or, for the headers that
// may carry either (after false), as a Unix time in seconds (from 10^9:
// 2001) or milliseconds (from 10^12), as services differ. A value that is
// not a number, or negative, is as good as absent.
func secondsOrTime(v string, now time.Time, after bool) (time.Duration, bool) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	switch {
	case after || n < 1e9:
		return time.Duration(min(n, maxRetryAfter.Seconds()) * float64(time.Second)), true
	case n < 1e12:
		// Whole seconds and the fraction apart: in nanoseconds, a time
		// past the year 2262 would overflow.
		secs, frac := math.Modf(n)
		return waitUntil(time.Unix(int64(secs), int64(frac*1e9)), now), true
	default:
		return waitUntil(time.UnixMilli(int64(min(n, 1e18))), now), true
	}
}

// waitUntil is the wait until at: none if it is past, maxRetryAfter at most.
func waitUntil(at, now time.Time) time.Duration {
	return min(max(at.Sub(now), 0), maxRetryAfter)
}

// structuredParams reads the key=value parameters of a structured header
// field, separated by commas or semicolons, quotes removed.
func structuredParams(v string) map[string]string {
	params := map[string]string{}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
		if k, val, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
			params[strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return params
}

// maxRetryAfter caps a Retry-After; anything longer is shown as the
// service sent it.
const maxRetryAfter = 24 * time.Hour
