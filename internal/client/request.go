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
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/sync/singleflight"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/reason"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// logSubsystem is the tflog subsystem of every HTTP log line; its level can be
// set on its own with TF_LOG_PROVIDER_BROWSERPROFILE_HTTP.
const logSubsystem = "http"

// get sends one GET, with retries, and returns a 2xx JSON answer (a
// listing.Page, whether a page of the list or one profile) or a
// *RequestError. Identical reads in flight at the same time are sent once,
// under a context that no one caller's cancellation ends (shared.go); each
// caller waits on its own context.
func (c *Client) get(ctx context.Context, u *url.URL) (*listing.Page, error) {
	flight := c.flights.DoChan(u.String(), func() (any, error) {
		fctx, cancel := detached(ctx)
		defer cancel()
		return c.fetch(fctx, u)
	})
	var r singleflight.Result
	select {
	case r = <-flight:
	case <-ctx.Done():
		select {
		case r = <-flight: // done at the same moment
		default:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &RequestError{Kind: ErrTimeout, Method: http.MethodGet, URL: c.display(u), Cause: ctx.Err()}
			}
			return nil, ctx.Err()
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	resp, ok := r.Val.(*listing.Page)
	if !ok {
		return nil, fmt.Errorf("client: unexpected result %T", r.Val)
	}
	return resp, nil
}

// fetch sends one GET through the retry loop and returns its 2xx JSON
// answer, or the *RequestError that names what went wrong.
func (c *Client) fetch(ctx context.Context, u *url.URL) (*listing.Page, error) {
	start := time.Now()
	ctx, attempts := withAttempts(c.logContext(ctx))
	req, err := c.newRequest(ctx, u)
	if err != nil {
		return nil, err
	}
	// The body is read inside the retry loop, so that a connection dropped
	// halfway through a body is retried like one dropped before it.
	var body []byte
	budget := c.newBodyBudget()
	defer budget.releaseAll()
	req.SetResponseHandler(func(resp *http.Response) error {
		var err error
		body, err = readBody(resp, c.cfg.MaxBodyBytes, budget)
		return err
	})

	resp, err := c.http.Do(req)
	if resp != nil {
		defer resp.Body.Close()
	}
	f := &failure{c: c, u: u, start: start, attempts: attempts, resp: resp, body: body}
	if err != nil {
		return nil, f.fromTransport(ctx, err)
	}
	if kind, cause := statusKind(resp, body); kind != nil {
		return nil, f.build(kind, cause)
	}
	return &listing.Page{URL: resp.Request.URL, Status: resp.StatusCode, Header: resp.Header, Body: cleanText(body), Requests: attempts.number()}, nil
}

// newRequest is a GET of u with the headers every request carries: the
// token, JSON, the user agent, and the gateway's headers on the base
// address's origin only.
func (c *Client) newRequest(ctx context.Context, u *url.URL) (*retryablehttp.Request, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", c.display(u), redactedError(err, c.redactor))
	}
	if sameOrigin(c.base, u) {
		for name, values := range c.cfg.Headers {
			req.Header[name] = values
		}
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	return req, nil
}

// statusKind names what a response that arrived says, or nil for a 2xx
// JSON answer; the cause is for a kind that needs explaining.
func statusKind(resp *http.Response, body []byte) (kind, cause error) {
	switch code := resp.StatusCode; {
	case rateLimited(resp):
		return ErrUnavailable, nil
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ErrUnauthorized, nil
	case code == http.StatusNotFound:
		return ErrNotFound, nil
	case code == http.StatusBadRequest && plainHTTPToTLSPort(body):
		return ErrSchemeMismatch, errors.New("the server speaks https on this port, and the base address says http://")
	case retryableStatus(code):
		return ErrUnavailable, nil
	case code < 200 || code > 299:
		return ErrUnexpectedStatus, nil
	case !looksLikeJSON(body):
		return ErrNotJSON, nil
	}
	return nil, nil
}

// cleanText drops a byte order mark, which is not part of the record, and
// replaces invalid UTF-8 (Latin-1 from a legacy backend, say): Terraform
// strings must be UTF-8, and failing the plan later would help no one.
func cleanText(body []byte) []byte {
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	if !utf8.Valid(body) {
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	return body
}

// failure builds the error that ends a read; everything in it from outside
// is redacted here.
type failure struct {
	c        *Client
	u        *url.URL
	start    time.Time
	attempts *attempts
	resp     *http.Response // the last attempt's, or nil
	body     []byte
}

// fromTransport is the error for a read whose last attempt got no response:
// err as it is when the caller cancelled.
func (f *failure) fromTransport(ctx context.Context, err error) error {
	var tooLong *retryAfterTooLong
	switch {
	case errors.As(err, &tooLong):
		e := f.build(ErrRetryAfterTooLong, nil)
		e.RetryAt, e.RetryHeader, e.RetryAfter = tooLong.at, tooLong.header, f.c.redactor.Quote(tooLong.raw)
		return e
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return err
	}
	kind := classifyTransportError(ctx, err)
	e := f.build(kind, unwrapURLError(err))
	if kind == ErrNoAnswer {
		e.HeaderWait = f.c.cfg.HeaderTimeout
	}
	if pe, ok := asProxyError(err); ok {
		e.ProxyStatus = f.c.redactor.Quote(pe.status)
		if p, perr := f.c.proxy(f.u); perr == nil && p != nil {
			e.Proxy = proxyDisplay(p)
		}
	}
	return e
}

// build is the error of kind: the attempts, and the last response's status,
// reason, excerpt and request id.
func (f *failure) build(kind, cause error) *RequestError {
	r := f.c.redactor
	n, status, id := f.attempts.snapshot()
	e := &RequestError{
		Kind: kind, Method: http.MethodGet, URL: f.c.display(f.u), Cause: redactedError(cause, r),
		Attempts: n, Elapsed: time.Since(f.start).Round(time.Millisecond), StatusCode: status,
	}
	if resp := f.resp; resp != nil {
		e.StatusCode, id = resp.StatusCode, requestID(resp.Header)
		if f.body == nil {
			f.body, _ = io.ReadAll(io.LimitReader(resp.Body, redact.Window))
		}
		e.Excerpt = excerpt(f.body, r)
		if resp.StatusCode >= 400 {
			e.Reason = r.Redact(reason.Of(f.body))
		}
		if resp.StatusCode == http.StatusNotAcceptable || resp.StatusCode == http.StatusUnsupportedMediaType {
			e.Offered = r.Quote(offered(resp.Header))
		}
	}
	e.RequestID = r.Quote(id)
	return e
}

// offered names the media types a 406 or 415 answer says the service has.
func offered(h http.Header) string {
	var parts []string
	for _, name := range []string{"Accept", "Accept-Post", "Content-Type"} {
		if v := h.Get(name); v != "" {
			parts = append(parts, name+": "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// plainHTTPToTLSPort recognises the answers TLS servers give a plain HTTP
// request (Go's net/http, nginx).
func plainHTTPToTLSPort(body []byte) bool {
	return bytes.Contains(body, []byte("HTTP request to an HTTPS server")) ||
		bytes.Contains(body, []byte("plain HTTP request was sent to HTTPS port"))
}

// shapeError reports a 2xx answer whose JSON could not be decoded.
func (c *Client) shapeError(u *url.URL, resp *listing.Page, cause error) *RequestError {
	return &RequestError{Kind: ErrUnexpectedShape, Method: http.MethodGet, URL: c.display(u), StatusCode: resp.Status,
		RequestID: c.redactor.Quote(requestID(resp.Header)), Excerpt: excerpt(resp.Body, c.redactor), Cause: redactedError(cause, c.redactor)}
}

// readBody reads a whole body, refusing one over limit bytes. Memory stays
// close to the body: a body that announces its length is read into one
// buffer of that size (one that announces more than the limit is refused
// unread); one that does not is read in chunks and joined once at the end,
// so that refusing an oversized body never holds more than the limit and a
// chunk, and no buffer is ever doubled past what arrived.
func readBody(resp *http.Response, limit int64, budget *bodyBudget) (body []byte, err error) {
	defer resp.Body.Close()
	mark := budget.mark()
	defer func() {
		if err != nil {
			budget.releaseSince(mark) // this attempt's body is dropped
		}
	}()
	if n := resp.ContentLength; n > limit {
		return nil, fmt.Errorf("%w: %d bytes announced, limit %d", ErrBodyTooLarge, n, limit)
	} else if n >= 0 {
		if err := budget.take(n + 1); err != nil {
			return nil, err
		}
		// One byte more than announced, to see the end.
		buf := make([]byte, n+1)
		got, err := fill(resp.Body, buf)
		switch {
		case err != nil:
			return nil, err // a connection dropped mid-body is retried
		case int64(got) < n:
			return nil, io.ErrUnexpectedEOF
		case int64(got) == n:
			return buf[:got], nil
		}
		// Longer than announced: read on, in chunks, within the limit.
		return readChunks(io.MultiReader(bytes.NewReader(buf), resp.Body), limit, budget)
	}
	return readChunks(resp.Body, limit, budget)
}

// fill reads into buf until it is full or the body ends; the end is not an
// error, a dropped connection is.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// bodyChunk is the unit in which a body of unknown length is read.
const bodyChunk = 1 << 20

func readChunks(r io.Reader, limit int64, budget *bodyBudget) ([]byte, error) {
	var chunks [][]byte
	var total int64
	for {
		size := min(bodyChunk, limit+1-total)
		if err := budget.take(size); err != nil {
			return nil, err
		}
		chunk := make([]byte, size)
		n, err := fill(r, chunk)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, chunk[:n])
		total += int64(n)
		if total > limit {
			return nil, fmt.Errorf("%w: limit %d bytes", ErrBodyTooLarge, limit)
		}
		if n < len(chunk) {
			break
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	body := make([]byte, 0, total)
	for i, c := range chunks {
		body = append(body, c...)
		chunks[i] = nil
	}
	return body, nil
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

// logContext adds the http subsystem, with the token and the pace store's
// password masked in messages and field values as a second line of
// defence: neither is passed to the logger in the first place. A short one
// is left to the first line, as the logger would mask it inside every word
// and address.
func (c *Client) logContext(ctx context.Context) context.Context {
	ctx = tflog.NewSubsystem(ctx, logSubsystem, tflog.WithLevelFromEnv("TF_LOG_PROVIDER_BROWSERPROFILE_HTTP"))
	if len(c.logMasked) > 0 {
		ctx = tflog.SubsystemMaskAllFieldValuesStrings(ctx, logSubsystem, c.logMasked...)
		ctx = tflog.SubsystemMaskMessageStrings(ctx, logSubsystem, c.logMasked...)
	}
	ctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, logSubsystem, "authorization")
	return ctx
}

// attemptTimes is where a round trip's time went: the pace's ticket (its
// waits, and whether it was shared), the back-off before it, if it began a
// retry, and the wire.
type attemptTimes struct {
	ticket  pace.Ticket
	backoff time.Duration
	wire    time.Duration
}

// logAttempt writes one line per round trip (a redirect's included):
// method, address (query values shown, the token masked in them), status,
// the number of the attempt it belongs to, and where its time went, in
// milliseconds: the wait for the pace (pace_wait_ms, and its parts that
// are not nothing, wait_<hold>_ms), the back-off before it (backoff_ms),
// and the wire (duration_ms), with whether the pace was shared; never
// headers; every text from outside redacted. It only reads the attempt's
// number, which the retry loop keeps (attempts).
func logAttempt(req *http.Request, resp *http.Response, err error, at attemptTimes, r *redact.Redactor) {
	ctx := req.Context()
	fields := map[string]any{
		"method":      req.Method,
		"url":         r.RedactURL(req.URL),
		"attempt":     attemptsFrom(ctx).number(),
		"duration_ms": at.wire.Milliseconds(),
		"backoff_ms":  at.backoff.Milliseconds(),
		"shared":      at.ticket.Shared(),
	}
	waitFields(fields, at.ticket.Waited())
	if err != nil {
		fields["error"] = r.Quote(strings.TrimSpace(err.Error()))
		tflog.SubsystemDebug(ctx, logSubsystem, "request failed", fields)
		return
	}
	fields["status"] = resp.StatusCode
	if id := requestID(resp.Header); id != "" {
		fields["request_id"] = r.Quote(id)
	}
	tflog.SubsystemDebug(ctx, logSubsystem, "response", fields)
}
