package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// logSubsystem is the tflog subsystem of every HTTP log line; its level can be
// set on its own with TF_LOG_PROVIDER_BROWSERPROFILE_HTTP.
const logSubsystem = "http"

// response is one successful (2xx) answer whose body is JSON.
type response struct {
	status int
	url    *url.URL
	header http.Header
	body   []byte
}

// get sends one GET, with retries, and returns a 2xx JSON answer or a
// *RequestError. Identical reads in flight at the same time are sent once.
func (c *Client) get(ctx context.Context, u *url.URL) (*response, error) {
	v, err, _ := c.flights.Do(u.String(), func() (any, error) {
		return c.fetch(ctx, u)
	})
	if err != nil {
		return nil, err
	}
	resp, ok := v.(*response)
	if !ok {
		return nil, fmt.Errorf("client: unexpected result %T", v)
	}
	return resp, nil
}

type attemptsKey struct{}

func (c *Client) fetch(ctx context.Context, u *url.URL) (*response, error) {
	start := time.Now()
	attempts := new(atomic.Int32)
	ctx = context.WithValue(c.logContext(ctx), attemptsKey{}, attempts)

	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", u.Redacted(), err)
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)

	// The body is read inside the retry loop, so that a connection dropped
	// halfway through a body is retried like one dropped before it.
	var body []byte
	req.SetResponseHandler(func(resp *http.Response) error {
		var err error
		body, err = readBody(resp, c.cfg.MaxBodyBytes)
		return err
	})

	resp, err := c.http.Do(req)
	fail := func(kind error, cause error) *RequestError {
		e := &RequestError{
			Kind: kind, Method: http.MethodGet, URL: u.String(), Cause: cause,
			Attempts: int(attempts.Load()), Elapsed: time.Since(start).Round(time.Millisecond),
		}
		if resp != nil {
			e.StatusCode = resp.StatusCode
			e.RequestID = requestID(resp.Header)
			if body == nil {
				body, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
			}
			e.Excerpt = excerpt(body, c.cfg.Token)
		}
		return e
	}
	if resp != nil {
		defer resp.Body.Close()
	}

	var tooLong *retryAfterTooLong
	switch {
	case errors.As(err, &tooLong):
		e := fail(ErrRetryAfterTooLong, nil)
		e.RetryAt = tooLong.at
		return nil, e
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fail(ErrTimeout, nil)
	case errors.Is(err, context.Canceled):
		return nil, err
	case errors.Is(err, ErrOffHost):
		return nil, fail(ErrOffHost, unwrapURLError(err))
	case errors.Is(err, ErrBodyTooLarge):
		return nil, fail(ErrBodyTooLarge, nil)
	case err != nil:
		return nil, fail(ErrUnavailable, unwrapURLError(err))
	}

	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return nil, fail(ErrUnauthorized, nil)
	case code == http.StatusNotFound:
		return nil, fail(ErrNotFound, nil)
	case retryableStatus(code):
		return nil, fail(ErrUnavailable, nil)
	case code < 200 || code > 299:
		return nil, fail(ErrUnexpectedStatus, nil)
	case !looksLikeJSON(body):
		return nil, fail(ErrNotJSON, nil)
	}
	// A byte order mark is not part of the record, and Terraform strings
	// must be UTF-8: a body that is not (Latin-1 from a legacy backend,
	// say) has its invalid bytes replaced rather than failing the plan later.
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	if !utf8.Valid(body) {
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	return &response{status: resp.StatusCode, url: resp.Request.URL, header: resp.Header, body: body}, nil
}

// shapeError reports a 2xx answer whose JSON could not be decoded.
func (c *Client) shapeError(u *url.URL, resp *response, cause error) *RequestError {
	return &RequestError{Kind: ErrUnexpectedShape, Method: http.MethodGet, URL: u.String(), StatusCode: resp.status,
		RequestID: requestID(resp.header), Excerpt: excerpt(resp.body, c.cfg.Token), Cause: cause}
}

// readBody reads a whole body, refusing one over limit bytes.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	var buf bytes.Buffer
	if n := resp.ContentLength; n > limit {
		return nil, fmt.Errorf("%w: %d bytes announced, limit %d", ErrBodyTooLarge, n, limit)
	} else if n > 0 {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%w: limit %d bytes", ErrBodyTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// looksLikeJSON checks the first significant byte; decoding finds the rest.
func looksLikeJSON(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// requestIDHeaders are the headers services and their gateways commonly use
// to identify a request for support.
var requestIDHeaders = []string{"X-Request-Id", "Request-Id", "X-Correlation-Id", "X-Amzn-Requestid", "X-Trace-Id", "Cf-Ray"}

func requestID(h http.Header) string {
	for _, name := range requestIDHeaders {
		if v := h.Get(name); v != "" {
			return v
		}
	}
	return ""
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// logContext adds the http subsystem, with the token masked in messages and
// field values as a second line of defence: the token is never passed to the
// logger in the first place.
func (c *Client) logContext(ctx context.Context) context.Context {
	ctx = tflog.NewSubsystem(ctx, logSubsystem, tflog.WithLevelFromEnv("TF_LOG_PROVIDER_BROWSERPROFILE_HTTP"))
	ctx = tflog.SubsystemMaskAllFieldValuesStrings(ctx, logSubsystem, c.cfg.Token)
	ctx = tflog.SubsystemMaskMessageStrings(ctx, logSubsystem, c.cfg.Token)
	ctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, logSubsystem, "authorization")
	return ctx
}

// logAttempt writes one line per attempt: method, path, status, duration and
// attempt number, never headers.
func logAttempt(req *http.Request, resp *http.Response, err error, took time.Duration) {
	ctx := req.Context()
	attempt := int32(0)
	if n, ok := ctx.Value(attemptsKey{}).(*atomic.Int32); ok {
		attempt = n.Add(1)
	}
	fields := map[string]any{
		"method":      req.Method,
		"host":        req.URL.Host,
		"path":        req.URL.EscapedPath(),
		"query":       req.URL.RawQuery,
		"attempt":     attempt,
		"duration_ms": took.Milliseconds(),
	}
	if err != nil {
		fields["error"] = strings.TrimSpace(err.Error())
		tflog.SubsystemDebug(ctx, logSubsystem, "request failed", fields)
		return
	}
	fields["status"] = resp.StatusCode
	if id := requestID(resp.Header); id != "" {
		fields["request_id"] = id
	}
	tflog.SubsystemDebug(ctx, logSubsystem, "response", fields)
}
