package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
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

	// Connections that cannot work. Apart from ErrRefused and ErrNoAnswer,
	// which can pass, none is retried.

	// ErrTLS: the server's certificate is not trusted, or not for its name.
	ErrTLS = errors.New("the server's TLS certificate is not trusted")
	// ErrSchemeMismatch: https:// to a plain-HTTP server, or the reverse.
	ErrSchemeMismatch = errors.New("the base address's scheme does not match what the server speaks")
	// ErrTLSRefused: the server ended the TLS handshake with an alert, as
	// one that requires a client certificate does without a good one.
	ErrTLSRefused = errors.New("the server refused the TLS handshake")
	// ErrProxy: the proxy (HTTPS_PROXY, HTTP_PROXY) could not be reached,
	// or refused to connect to the service; RequestError.Proxy names it.
	ErrProxy = errors.New("the proxy refused the connection or could not be reached")
	// ErrRefused: nothing is listening at the address.
	ErrRefused = errors.New("the connection was refused")
	// ErrDNS: the host name does not resolve.
	ErrDNS = errors.New("the host name does not resolve")
	// ErrRedirectLoop: the service redirected in a loop.
	ErrRedirectLoop = errors.New("the service redirected in a loop")
	// ErrNoAnswer: no response headers arrived in time, on every attempt.
	ErrNoAnswer = errors.New("the service sent no response in time")

	// ErrWrongRecord: a single read was answered with another profile's record.
	ErrWrongRecord = errors.New("the service answered with another profile's record")
	// ErrErrorObject: a single read was answered 2xx with an error object.
	ErrErrorObject = errors.New("the service answered with an error object")
)

// RequestError describes a failed request in terms a user can act on. It
// never holds the API token: every text in it that came from outside (the
// address, the body excerpt, the request id, the cause) was redacted when the
// error was built.
type RequestError struct {
	Kind        error
	Method      string
	URL         string // with its query values, without user information, the token masked (redact.Redactor.RedactURL)
	StatusCode  int    // of the last response, on any attempt; 0 when none arrived
	Excerpt     string // first bytes of the body, token masked
	Reason      string // the service's reason, read from an error body (reason.go), token masked
	Offered     string // for 406 and 415: the media types the service named, token masked
	RequestID   string // quoted with Redactor.Quote
	Attempts    int
	Elapsed     time.Duration
	RetryAt     time.Time     // for ErrRetryAfterTooLong
	RetryAfter  string        // the value of RetryHeader, for ErrRetryAfterTooLong
	RetryHeader string        // Retry-After, or the rate-limit reset header read without one
	Key         string        // for ErrWrongRecord and ErrErrorObject: the key asked for
	GotKey      string        // for ErrWrongRecord: the key of the record that came back
	HeaderWait  time.Duration // for ErrNoAnswer: how long each attempt waited for response headers
	Proxy       string        // for ErrProxy: the proxy's address, without its credentials
	ProxyStatus string        // for ErrProxy: its answer to the CONNECT; "" when it was not reached
	Cause       error         // transport or decoding error, if any, as redacted text
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
// the token masked in every form (redact.Redactor), so that a service (or proxy)
// echoing the request cannot put it into a diagnostic.
func excerpt(body []byte, r *redact.Redactor) string {
	return r.Clip(string(body[:min(len(body), redact.Window)]), excerptLimit, func(s string) string {
		return strings.Join(strings.Fields(s), " ")
	})
}

// redactedError keeps an error's text, redacted, and nothing else.
func redactedError(err error, r *redact.Redactor) error {
	if err == nil {
		return nil
	}
	return errors.New(r.Redact(err.Error()))
}
