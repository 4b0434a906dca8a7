package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
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

// noneRemain tells whether a quota the answer announces (pace.Announced)
// has no requests left.
func noneRemain(h http.Header) bool {
	q, ok := pace.Announced(h, time.Now())
	return ok && q.Remaining == 0
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
		opErr     *net.OpError
		dnsErr    *net.DNSError
	)
	if _, ok := asProxyError(err); ok {
		return ErrProxy
	}
	switch {
	case errors.Is(err, ErrOffHost):
		return ErrOffHost
	case errors.Is(err, ErrBodyTooLarge):
		return ErrBodyTooLarge
	case errors.Is(err, errRedirectLoop):
		return ErrRedirectLoop
	case errors.As(err, &certErr), errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &invalid):
		return ErrTLS
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// A TLS alert from the server, as Go reports one.
		return ErrTLSRefused
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return ErrSchemeMismatch
	case errors.As(err, &dnsErr):
		return ErrDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, pace.ErrOutlastsDeadline), ctx.Err() != nil:
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
// Without a Retry-After, many services say when their quota resets instead
// (pace.Announced); that is read the same way, unless the same family of
// headers says that requests remain, in which case the reset is that of
// another limit than the one refusing.
func pauseFrom(h http.Header, now time.Time) (pause, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if wait, ok := pace.SecondsOrTime(v, now, true); ok {
			return pause{wait, "Retry-After", v}, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return pause{pace.Until(at, now), "Retry-After", v}, true
		}
		return pause{}, false
	}
	if q, ok := pace.Announced(h, now); ok && q.Remaining <= 0 {
		return pause{q.Reset.Sub(now), q.Header, q.Raw}, true
	}
	return pause{}, false
}
