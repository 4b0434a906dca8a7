package client

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of failure. A *RequestError wraps exactly one of them; test with errors.Is.
var (
	// ErrUnauthorized: the service answered 401 or 403.
	ErrUnauthorized = errors.New("the service rejected the API token")
	// ErrNotFound: the service answered 404.
	ErrNotFound = errors.New("not found")
	// ErrNotJSON: a success status whose body is not JSON, typically an HTML
	// page served because the base address is not the API's.
	ErrNotJSON = errors.New("the response is not JSON")
	// ErrUnavailable: rate limited (429) or unavailable (502/503/504, dropped
	// connection) on every attempt.
	ErrUnavailable = errors.New("the service was rate limiting or unavailable on every attempt")
	// ErrRetryAfterTooLong: the service asked for a longer pause than the
	// provider is configured to wait.
	ErrRetryAfterTooLong = errors.New("the service asked to retry later than the provider is willing to wait")
	// ErrUnexpectedStatus: any other status that is not a success.
	ErrUnexpectedStatus = errors.New("unexpected HTTP status")
	// ErrUnexpectedShape: JSON, but not a shape the client understands.
	ErrUnexpectedShape = errors.New("the response is JSON of an unrecognised shape")
	// ErrBodyTooLarge: the body exceeded the client's size limit.
	ErrBodyTooLarge = errors.New("the response body is larger than the provider accepts")
	// ErrOffHost: a redirect or next-page link pointed away from the base
	// address's scheme, host and port; it was not followed, so the token never
	// left for another host.
	ErrOffHost = errors.New("refused to follow a link to another host")
	// ErrTimeout: the overall deadline for the read passed.
	ErrTimeout = errors.New("the request did not complete within the timeout")
)

// RequestError describes a failed request in terms a user can act on. It
// never holds the API token: bodies are masked before they are excerpted.
type RequestError struct {
	Kind       error
	Method     string
	URL        string
	StatusCode int    // 0 when no response arrived
	Excerpt    string // first bytes of the body, token masked
	RequestID  string
	Attempts   int
	Elapsed    time.Duration
	RetryAt    time.Time // for ErrRetryAfterTooLong
	Cause      error     // transport or decoding error, if any
}

func (e *RequestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %v", e.Method, e.URL, e.Kind)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	return b.String()
}

func (e *RequestError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// excerptLimit is how much of a body a diagnostic quotes.
const excerptLimit = 300

// excerpt returns the first bytes of body as one line of printable text, with
// every occurrence of secret replaced, so that a service (or proxy) echoing the
// request cannot put the token into a diagnostic. Masking happens before
// truncation, so no prefix of the token survives a cut either.
func excerpt(body []byte, secret string) string {
	s := string(body[:min(len(body), 4*excerptLimit+len(secret))])
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "***")
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if r := []rune(s); len(r) > excerptLimit {
		s = string(r[:excerptLimit]) + "…"
	}
	return s
}
