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
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"

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

// attempts is the retry loop's record of one read's attempts: their
// number, the refused connections among them, the retries spent (in
// quarters: retryCost), and the last response any of them got, for the
// error that ends the read even when the last attempt got none. The loop
// writes it (beginAttempt before each attempt, checkRetry after it); the
// log line and the error only read it.
type attempts struct {
	mu        sync.Mutex
	n         int
	refused   int
	spent     int
	status    int
	requestID string
	endedAt   time.Time     // when the last attempt ended
	backoff   time.Duration // the wait since, before the attempt under way, until its first round trip takes it
}

type attemptsKey struct{}

// withAttempts gives a read's context its record of attempts.
func withAttempts(ctx context.Context) (context.Context, *attempts) {
	a := &attempts{}
	return context.WithValue(ctx, attemptsKey{}, a), a
}

// attemptsFrom is the record withAttempts put in ctx, or nil.
func attemptsFrom(ctx context.Context) *attempts {
	a, _ := ctx.Value(attemptsKey{}).(*attempts)
	return a
}

// beginAttempt is the retry loop's hook before attempt i (from 0).
func beginAttempt(_ retryablehttp.Logger, req *http.Request, i int) {
	if a := attemptsFrom(req.Context()); a != nil {
		a.mu.Lock()
		a.n = i + 1
		if !a.endedAt.IsZero() {
			a.backoff = time.Since(a.endedAt)
		}
		a.mu.Unlock()
	}
}

// takeBackoff is the back-off before the attempt under way, for its first
// round trip (a redirect's waited none); 0 outside a read.
func (a *attempts) takeBackoff() time.Duration {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.backoff
	a.backoff = 0
	return b
}

// number is the attempt under way, or the last one; 0 outside a read.
func (a *attempts) number() int {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// ended notes an attempt's outcome and returns the refused connections so far.
func (a *attempts) ended(resp *http.Response, err error) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endedAt = time.Now()
	if resp != nil {
		a.status, a.requestID = resp.StatusCode, requestID(resp.Header)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		a.refused++
	}
	return a.refused
}

// spend takes cost from a read's budget of retries, unless too little is
// left; it tells whether it did.
func (a *attempts) spend(cost, budget int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.spent+cost > budget {
		return false
	}
	a.spent += cost
	return true
}

func (a *attempts) snapshot() (n, status int, requestID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, a.status, a.requestID
}

// errNoAttempts is checkRetry's answer to a request sent without a record
// of its attempts: a request that did not come through fetch.
var errNoAttempts = errors.New("client: a request sent without its record of attempts")

// checkRetry decides, after each attempt, whether to try again (the retry
// model: waits).
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	a := attemptsFrom(ctx)
	if a == nil {
		return false, errNoAttempts
	}
	refused := a.ended(resp, err)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	budget := retryBudget(c.cfg.MaxRetries)
	outage := func(retry bool) bool {
		if retry {
			tallyFrom(ctx).outage()
		}
		return retry
	}
	if err != nil {
		switch kind := classifyTransportError(ctx, err); kind {
		case ErrUnavailable, ErrNoAnswer:
			return outage(a.spend(RefusalsPerRetry, budget)), err
		case ErrRefused:
			// A service restarting refuses connections for a moment; nothing
			// listening refuses them for good, so only a few tries.
			return outage(refused < maxRefused && a.spend(RefusalsPerRetry, budget)), err
		}
		return false, err
	}
	if !retryableStatus(resp.StatusCode) && !rateLimited(resp) {
		return false, nil
	}
	p, asked := pauseFrom(resp.Header, time.Now())
	if asked && p.wait > c.cfg.MaxWait {
		return false, &retryAfterTooLong{at: time.Now().Add(p.wait), header: p.header, raw: p.raw}
	}
	retry := a.spend(retryCost(resp, asked), budget)
	if !rateLimited(resp) {
		outage(retry)
	}
	return retry, nil
}

// RefusalsPerRetry is how many retries of a rate limit's refusal that does
// not say when to come back make one of max_retries: the pacer, not a wait,
// spaces them (waits).
const RefusalsPerRetry = 4

// retryBudget is a read's retries in quarters (retryCost): also the retry
// loop's most, when every retry is a quarter.
func retryBudget(maxRetries int) int { return RefusalsPerRetry * maxRetries }

// retryCost is what retrying resp takes from the read's budget, in
// quarters of a retry: a refusal that asked for no wait, one; any other
// answer worth retrying, a whole retry.
func retryCost(resp *http.Response, asked bool) int {
	if pacedOnly(resp, asked) {
		return 1
	}
	return RefusalsPerRetry
}

// pacedOnly tells a rate limit's refusal that asked for no wait (asked:
// whether pauseFrom read one): the pacer alone spaces its retry.
func pacedOnly(resp *http.Response, asked bool) bool { return !asked && rateLimited(resp) }

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
		// A TLS alert from the server: crypto/tls reports one over TCP as a
		// *net.OpError of this Op around an unexported type (its exported
		// AlertError is QUIC's).
		return ErrTLSRefused
	case errors.As(err, &record), errors.Is(err, http.ErrSchemeMismatch):
		return ErrSchemeMismatch
	case errors.As(err, &dnsErr):
		return ErrDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, pace.ErrOutlastsDeadline), ctx.Err() != nil:
		return ErrTimeout
	case strings.Contains(err.Error(), "timeout awaiting response headers"):
		// Transport.ResponseHeaderTimeout's error has no exported type or
		// sentinel, and other timeouts (a dial's, a TLS handshake's) share
		// its net.Error Timeout(): only its text tells it apart.
		return ErrNoAnswer
	}
	return ErrUnavailable
}

// waits draws the wait before each retry: the retry model. Every attempt
// goes through the pacer (transport.go), so the wait here is only what the
// answer adds to the pace.
//
//   - A rate limit's refusal that says when to come back (Retry-After, or
//     a quota's reset with none remaining) waits as asked, held between
//     minWait and maxWait; one asking longer than maxWait never gets here
//     (checkRetry fails the read at once, naming the time).
//   - One that does not say waits for nothing but the pacer: it has already
//     cut the pace for the refusal, and while the service refuses
//     everything it lets one request go at a time, each gap double the
//     last, up to maxWait (pace's probe). A back-off on top would wait
//     twice for one refusal.
//   - An outage (502, 503, 504, a dropped connection, no answer) backs
//     off: after retry i of the read (from 0), a base of minWait·2^i,
//     capped at maxWait, and a wait drawn uniformly between the base and
//     twice the base (capped at maxWait too). So minWait is the least wait
//     after an outage, every wait is at least the one before it could
//     have been, and clients that failed together spread out.
//
// A read's attempts are bounded in number by max_retries, where a retry of
// a refusal that asked for no wait counts a quarter (RefusalsPerRetry),
// and in time by request_timeout_seconds: no wait, the pacer's included,
// may outlast it.
type waits struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

// newWaits draws from src; nil is a source seeded from the system's.
func newWaits(src rand.Source) *waits {
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	return &waits{rnd: rand.New(src)}
}

// backoff is retryablehttp's Backoff: the wait after attempt (from 0).
func (w *waits) backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		wait, asked := retryAfter(resp.Header, time.Now())
		if asked {
			return min(max(wait, minWait), maxWait)
		}
		if pacedOnly(resp, asked) {
			return 0
		}
	}
	base := min(float64(minWait)*math.Pow(2, float64(attempt)), float64(maxWait))
	ceiling := min(2*base, float64(maxWait))
	w.mu.Lock()
	f := w.rnd.Float64()
	w.mu.Unlock()
	return time.Duration(base + f*(ceiling-base))
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
