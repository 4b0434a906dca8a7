package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// clientFor returns a client for any base address, with waits short enough
// for tests.
func clientFor(t *testing.T, rawBase string, tweak ...func(*Config)) *Client {
	t.Helper()
	base, err := ParseBaseURL(rawBase)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{BaseURL: base, Token: testToken, UserAgent: "test-agent/1", MaxRetries: 3,
		MinWait: 5 * time.Millisecond, MaxWait: 50 * time.Millisecond, Timeout: 10 * time.Second}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// providerRetries gives a client the provider's retry settings in place of
// clientFor's short ones.
func providerRetries(c *Config) {
	c.MaxRetries, c.MinWait, c.MaxWait, c.Timeout = DefaultMaxRetries, DefaultMinWait, DefaultMaxWait, DefaultTimeout
}

// Each connection that cannot work is named for what it is, quickly; only
// a refused connection is tried again, a few times.
func TestConnectionFailures_areClassifiedAndNotRetried(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	plainSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(plainSrv.Close)
	loopSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(loopSrv.Close)
	slowSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slowSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	cases := map[string]struct {
		base     string
		want     error
		attempts int
	}{
		"untrusted certificate": {tlsSrv.URL + "/api/v1", ErrTLS, 1},
		"https to plain http":   {strings.Replace(plainSrv.URL, "http://", "https://", 1) + "/api/v1", ErrSchemeMismatch, 1},
		"http to https":         {strings.Replace(tlsSrv.URL, "https://", "http://", 1) + "/api/v1", ErrSchemeMismatch, 1},
		"nothing listening":     {"http://" + closedAddr + "/api/v1", ErrRefused, maxRefused},
		"name does not resolve": {"https://nonexistent-host.invalid/api/v1", ErrDNS, 1},
		"redirect loop":         {loopSrv.URL + "/api/v1", ErrRedirectLoop, 1},
		"no response headers":   {slowSrv.URL + "/api/v1", ErrNoAnswer, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := clientFor(t, tc.base, func(c *Config) { c.MaxRetries = 2; c.HeaderTimeout = 200 * time.Millisecond })
			start := time.Now()
			_, err := c.ListProfiles(context.Background())
			var re *RequestError
			if !errors.As(err, &re) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if re.Attempts != tc.attempts {
				t.Errorf("%d attempts, want %d", re.Attempts, tc.attempts)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("reported as unavailable: %v", err)
			}
		})
	}
}

// A Retry-After that is not a number or a date is as good as absent; one
// years away fails at once and is shown as sent.
func TestRetryAfter_invalidOrAbsurdValues(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"soon": -1, "-5": -1, "NaN": -1, "Inf": -1, "": -1,
		"1.5":                           1500 * time.Millisecond,
		"1000000":                       pace.LongestPause,
		"Wed, 21 Oct 2319 07:28:00 GMT": pace.LongestPause,
		"Sun, 22 Nov 2026 12:00:03 GMT": 3 * time.Second,
	} {
		got, ok := retryAfter(http.Header{"Retry-After": {v}}, now)
		if want < 0 && ok || want >= 0 && (!ok || got != want) {
			t.Errorf("Retry-After %q: %s, %v", v, got, ok)
		}
	}
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "Wed, 21 Oct 2319 07:28:00 GMT")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, ErrRetryAfterTooLong) || re.RetryAfter != "Wed, 21 Oct 2319 07:28:00 GMT" || re.Attempts != 1 {
		t.Errorf("err = %v (%+v)", err, re)
	}
}

// After retries, the last status is shown, even when the last attempt got
// no response at all. Three retries: the two bare 429s count a quarter
// each, so three dropped connections follow them.
func TestRequestError_keepsTheLastStatusSeen(t *testing.T) {
	t.Parallel()
	n := 0
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		if n > 2 {
			dropHijacked(w)
			return
		}
		w.Header().Set("X-Request-Id", "req-"+strings.Repeat("9", 5000))
		w.WriteHeader(http.StatusTooManyRequests)
	}, func(c *Config) { c.MaxRetries = 3 })
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || re.StatusCode != http.StatusTooManyRequests || re.Attempts != 5 {
		t.Fatalf("err = %v (%+v)", err, re)
	}
	if len(re.RequestID) > redact.MaxQuoted+4 {
		t.Errorf("request id of %d bytes quoted whole", len(re.RequestID))
	}
}

func dropHijacked(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// A single read answered with another profile's record, or with an error
// object, is an error naming both keys.
func TestGetProfile_checksTheRecordIsTheOneAskedFor(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]error{
		`{"profile_key":"someone-else","name":"x"}`:                      ErrWrongRecord,
		`{"error":{"code":"not_found","profile_key":"a"}}`:               ErrErrorObject,
		`{"errors":[{"message":"boom"}],"data":{"profile_key":"a"}}`:     ErrErrorObject,
		`{"data":{"profile_key":"a"},"error":null}`:                      nil,
		`{"profile_key":"a","error":"a field that happens to be there"}`: nil,
	} {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) })
		p, err := c.GetProfile(context.Background(), "a")
		var re *RequestError
		switch {
		case want == nil && (err != nil || p.Key != "a"):
			t.Errorf("%s: %v", body, err)
		case want != nil && (!errors.Is(err, want) || !errors.As(err, &re) || re.Key != "a" || p.Raw != nil):
			t.Errorf("%s: err = %v, profile %q", body, err, p.Raw)
		case want == ErrWrongRecord && re.GotKey != "someone-else":
			t.Errorf("GotKey = %q", re.GotKey)
		}
	}
}

// Bodies are read within the limit whether they announce their length or
// not; one over it is refused, and a body cut short is an error.
func TestReadBody_withinTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 3 * bodyChunk / 2
	body := strings.Repeat("x", limit)
	cases := map[string]struct {
		length  int64
		content string
		want    error
	}{
		"announced":              {int64(len(body)), body, nil},
		"not announced":          {-1, body, nil},
		"not announced, small":   {-1, "[]", nil},
		"empty":                  {0, "", nil},
		"announced, too large":   {limit + 1, body + "x", ErrBodyTooLarge},
		"unannounced, too large": {-1, body + "x", ErrBodyTooLarge},
		"cut short":              {int64(len(body)), body[:100], io.ErrUnexpectedEOF},
	}
	for name, tc := range cases {
		resp := &http.Response{ContentLength: tc.length, Body: io.NopCloser(strings.NewReader(tc.content))}
		if tc.want == io.ErrUnexpectedEOF {
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(tc.content), iotest.ErrReader(io.ErrUnexpectedEOF)))
		}
		got, err := readBody(resp, limit, &bodyBudget{sem: semaphore.NewWeighted(2 * limit), max: limit})
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		case tc.want == nil && (err != nil || string(got) != tc.content):
			t.Errorf("%s: %d bytes, err %v", name, len(got), err)
		}
	}
}

// A list streamed far past the limit is refused as too large.
func TestListProfiles_refusesAnOversizedBody(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 1, standin.Options{Oversize: 8 << 20}, func(c *Config) { c.MaxBodyBytes = 2 << 20 })
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("err = %v", err)
	}
}

// Without a Retry-After, the rate-limit reset headers services send instead
// say how long to wait: seconds from now, or a Unix time in seconds or
// milliseconds where the header may carry either; not when the same family
// says requests remain (the reset is another limit's).
func TestRetryAfter_readsRateLimitResetHeadersWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	unix := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		header http.Header
		want   time.Duration // < 0: no pause read
		from   string
	}{
		{http.Header{"X-Ratelimit-Reset": {strconv.FormatInt(now.Unix()+30, 10)}, "X-Ratelimit-Remaining": {"0"}}, 30 * time.Second, "X-RateLimit-Reset"},
		{http.Header{"X-Ratelimit-Reset": {strconv.FormatInt(now.UnixMilli()+1500, 10)}}, 1500 * time.Millisecond, "X-RateLimit-Reset"},
		{http.Header{"X-Ratelimit-Reset": {"7"}}, 7 * time.Second, "X-RateLimit-Reset"},
		{http.Header{"X-Ratelimit-Reset": {unix + "0"}, "X-Ratelimit-Remaining": {"12"}}, -1, ""},
		{http.Header{"X-Rate-Limit-Reset": {strconv.FormatInt(now.Unix()+2, 10)}}, 2 * time.Second, "X-Rate-Limit-Reset"},
		{http.Header{"X-Ratelimit-Reset-After": {"0.25"}, "X-Ratelimit-Remaining": {"0"}}, 250 * time.Millisecond, "X-RateLimit-Reset-After"},
		{http.Header{"Ratelimit-Reset": {"3"}, "Ratelimit-Remaining": {"0"}}, 3 * time.Second, "RateLimit-Reset"},
		{http.Header{"Ratelimit": {"limit=10, remaining=0, reset=4"}}, 4 * time.Second, "RateLimit"},
		{http.Header{"Ratelimit": {`"default";r=0;t=5`}}, 5 * time.Second, "RateLimit"},
		{http.Header{"Ratelimit": {`"default";r=3;t=5`}}, -1, ""},
		{http.Header{"X-Ratelimit-Reset": {"soon"}}, -1, ""},
		{http.Header{"X-Ratelimit-Reset": {unix}, "Retry-After": {"9"}}, 9 * time.Second, "Retry-After"},
		{http.Header{"X-Ratelimit-Reset": {strconv.FormatInt(now.Unix()-5, 10)}}, 0, "X-RateLimit-Reset"},
		{http.Header{"X-Ratelimit-Reset": {"50000000000"}}, pace.LongestPause, "X-RateLimit-Reset"},    // seconds, in the year 3554
		{http.Header{"X-Ratelimit-Reset": {"50000000000000"}}, pace.LongestPause, "X-RateLimit-Reset"}, // milliseconds, in 3554
		{http.Header{"X-Ratelimit-Reset": {"1e30"}}, pace.LongestPause, "X-RateLimit-Reset"},
	} {
		p, ok := pauseFrom(tc.header, now)
		if tc.want < 0 && ok || tc.want >= 0 && (!ok || p.wait != tc.want || p.header != tc.from) {
			t.Errorf("%v: %s from %q (%v), want %s from %q", tc.header, p.wait, p.header, ok, tc.want, tc.from)
		}
	}
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Unix()+3600, 10))
		w.WriteHeader(http.StatusTooManyRequests)
	})
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, ErrRetryAfterTooLong) || re.RetryHeader != "X-RateLimit-Reset" || re.Attempts != 1 {
		t.Errorf("a reset an hour away: err = %v (%+v)", err, re)
	}
}
