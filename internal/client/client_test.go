package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "tok-abcdef123456"

// newTestClient returns a client for an httptest server running handler,
// with waits short enough for tests.
func newTestClient(t *testing.T, handler http.HandlerFunc, tweak ...func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return clientFor(t, srv.URL+"/api/v1", tweak...)
}

func TestGetProfile_sendsDocumentedRequest(t *testing.T) {
	t.Parallel()
	var got *http.Request
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		io.WriteString(w, `{"profile_key":"k1","name":"n"}`)
	})
	p, err := c.GetProfile(context.Background(), "k1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Key != "k1" || string(p.Raw) != `{"profile_key":"k1","name":"n"}` {
		t.Errorf("profile = %q %s", p.Key, p.Raw)
	}
	checks := map[string]string{
		"method":        got.Method,
		"path":          got.URL.Path,
		"Authorization": got.Header.Get("Authorization"),
		"Accept":        got.Header.Get("Accept"),
		"User-Agent":    got.Header.Get("User-Agent"),
	}
	want := map[string]string{
		"method": "GET", "path": "/api/v1/browsers/k1", "Authorization": "Bearer " + testToken,
		"Accept": "application/json", "User-Agent": "test-agent/1",
	}
	for k, v := range want {
		if checks[k] != v {
			t.Errorf("%s = %q, want %q", k, checks[k], v)
		}
	}
}

func TestGetProfile_encodesKeyAsOnePathSegment(t *testing.T) {
	t.Parallel()
	keys := []string{"team/alpha", "q?x=1#frag", "100% legit", "café-東京", "a;b,c", "..x", "%2F", " lead and trail "}
	var mu sync.Mutex
	var seen []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath())
		mu.Unlock()
		rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/v1/browsers/")
		key, err := url.PathUnescape(rest)
		if !ok || err != nil || strings.Contains(rest, "/") || r.URL.RawQuery != "" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"profile_key":`+quote(key)+`}`)
	})
	for _, k := range keys {
		p, err := c.GetProfile(context.Background(), k)
		if err != nil {
			t.Errorf("key %q: %v (paths seen %q)", k, err, seen)
			continue
		}
		if p.Key != k {
			t.Errorf("key %q came back as %q", k, p.Key)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestGetProfile_refusesKeysThatCannotBeSent(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	for key, want := range map[string]error{"": ErrKeyEmpty, ".": ErrKeyDotSegment, "..": ErrKeyDotSegment, "{profile_key}": ErrKeyPlaceholder} {
		if _, err := c.GetProfile(context.Background(), key); !errors.Is(err, want) {
			t.Errorf("key %q: err = %v, want %v", key, err, want)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the server", hits.Load())
	}
}

func TestErrors_mapStatusesToKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   error
		header []string // name, value, ...
	}{
		{401, `{"error":"invalid token"}`, ErrUnauthorized, nil},
		{403, `{"error":"forbidden"}`, ErrUnauthorized, nil},
		{404, `{"error":"not found"}`, ErrNotFound, nil},
		{400, `{"error":"bad"}`, ErrUnexpectedStatus, nil},
		{500, `oops`, ErrUnexpectedStatus, nil},
		{503, `<html>proxy</html>`, ErrUnavailable, nil},
		{429, `<html>slow down</html>`, ErrUnavailable, nil},
		{200, `<!doctype html><html>app</html>`, ErrNotJSON, nil},
		{200, ``, ErrNotJSON, nil},
		{200, `{"unrelated":true}`, ErrUnexpectedShape, nil},
		// A 403 is a rate limit's when it says so, as GitHub's are, and the
		// token's otherwise; a 401 is always the token's.
		{403, `{"message":"API rate limit exceeded"}`, ErrUnavailable, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "0"}},
		{403, `{"message":"secondary rate limit"}`, ErrUnavailable, []string{"Retry-After", "0"}},
		{403, `{"error":{"errors":[{"reason":"rateLimitExceeded"}]}}`, ErrUnavailable, []string{"RateLimit", "limit=10, remaining=0, reset=0"}},
		{403, `{"message":"Resource not accessible by integration"}`, ErrUnauthorized, []string{"X-RateLimit-Remaining", "4999", "X-RateLimit-Reset", "1700000000"}},
		{401, `{"message":"Bad credentials"}`, ErrUnauthorized, []string{"Retry-After", "0"}},
	}
	for _, tc := range cases {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(tc.header); i += 2 {
				w.Header().Set(tc.header[i], tc.header[i+1])
			}
			w.Header().Set("X-Request-Id", "rid-7")
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}, func(c *Config) { c.MaxRetries = 1 })
		_, err := c.ListProfiles(context.Background())
		var re *RequestError
		if !errors.Is(err, tc.want) || !errors.As(err, &re) {
			t.Errorf("HTTP %d %q %q: err = %v, want %v", tc.status, tc.body, tc.header, err, tc.want)
			continue
		}
		if re.StatusCode != tc.status || re.RequestID != "rid-7" || re.Method != "GET" || !strings.HasSuffix(re.URL, "/api/v1/browsers") {
			t.Errorf("HTTP %d: error fields %+v", tc.status, re)
		}
		if tc.body != "" && re.Excerpt == "" {
			t.Errorf("HTTP %d: no body excerpt", tc.status)
		}
	}
}

func TestErrors_neverCarryTheToken(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":"bad token","received":"`+r.Header.Get("Authorization")+`"}`)
	})
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), testToken) || strings.Contains(re.Excerpt, testToken) {
		t.Errorf("token leaked: %v / %s", err, re.Excerpt)
	}
	if !strings.Contains(re.Excerpt, "Bearer ***") {
		t.Errorf("excerpt = %s, want the masked echo", re.Excerpt)
	}
}

func TestRetry_recoversFromRateLimitAndOutages(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
		case 2:
			w.WriteHeader(502)
			io.WriteString(w, "<html>bad gateway</html>")
		case 3:
			panic(http.ErrAbortHandler) // dropped connection
		default:
			io.WriteString(w, `[{"profile_key":"a"}]`)
		}
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Profiles) != 1 || n.Load() != 4 {
		t.Errorf("profiles %d after %d requests", len(list.Profiles), n.Load())
	}
}

func TestRetry_lastStatusSurvivesGivingUp(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(503)
		io.WriteString(w, "<html><h1>503 Service Temporarily Unavailable</h1></html>")
	}, func(c *Config) { c.MaxRetries = 2 })
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if re.StatusCode != 503 || re.Attempts != 3 || n.Load() != 3 || !strings.Contains(re.Excerpt, "503 Service") {
		t.Errorf("error = %+v after %d requests", re, n.Load())
	}
}

func TestRetry_longRetryAfterFailsAtOnce(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(429)
	})
	start := time.Now()
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.Is(err, ErrRetryAfterTooLong) || !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
	if d := re.RetryAt.Sub(start); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("RetryAt is %s after the start, want about an hour", d)
	}
}

func TestRetry_cancellationStopsWaiting(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(429)
	}, func(c *Config) { c.MaxWait = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := c.ListProfiles(ctx); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancellation did not stop the wait")
	}
}

func TestRetryAfter_parsesSecondsAndDates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120":                           2 * time.Minute,
		"0":                             0,
		"Sun, 22 Nov 2026 12:05:00 GMT": 5 * time.Minute,
		"Sun, 22 Nov 2026 11:00:00 GMT": 0,
	} {
		got, ok := retryAfter(http.Header{"Retry-After": {v}}, now)
		if !ok || got != want {
			t.Errorf("Retry-After %q = %s %v, want %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "-5"} {
		if _, ok := retryAfter(http.Header{"Retry-After": {v}}, now); ok {
			t.Errorf("Retry-After %q accepted", v)
		}
	}
}

func TestBackoff_staysWithinBounds(t *testing.T) {
	t.Parallel()
	for attempt := range 10 {
		for range 50 {
			if w := backoff(time.Second, 8*time.Second, attempt, nil); w < 500*time.Millisecond || w > 8*time.Second {
				t.Fatalf("attempt %d waited %s", attempt, w)
			}
		}
	}
}

func TestRedirect_neverCarriesTokenToAnotherHost(t *testing.T) {
	t.Parallel()
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `[]`)
	}))
	t.Cleanup(other.Close)
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	})
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrOffHost) {
		t.Errorf("err = %v, want ErrOffHost", err)
	}
	if v := leaked.Load(); v != nil {
		t.Errorf("the other host was called, Authorization %q", v)
	}
}

func TestRedirect_followedOnSameOrigin(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/browsers" {
			http.Redirect(w, r, "/api/v1/browsers/", http.StatusMovedPermanently)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `[{"profile_key":"a"}]`)
	})
	if list, err := c.ListProfiles(context.Background()); err != nil || len(list.Profiles) != 1 {
		t.Errorf("list %v, err %v", list, err)
	}
}

func TestBody_sizeLimit(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `[`+strings.Repeat(`{"profile_key":"aaaaaaaa"},`, 100)+`{"profile_key":"z"}]`)
	}, func(c *Config) { c.MaxBodyBytes = 1000 })
	if _, err := c.ListProfiles(context.Background()); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("err = %v, want ErrBodyTooLarge", err)
	}
}

func TestGet_identicalReadsInFlightAreSentOnce(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	release := make(chan struct{})
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		<-release
		io.WriteString(w, `{"profile_key":`+quote(path.Base(r.URL.Path))+`}`)
	})
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), "k"); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d requests for 5 identical reads in flight", n.Load())
	}
}

func TestRetry_staysInsideTheOverallDeadline(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
	}, func(c *Config) { c.MaxRetries = 10; c.MaxWait = 5 * time.Second; c.Timeout = 1500 * time.Millisecond })
	start := time.Now()
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s, deadline 1.5s", took)
	}
}

func TestGetProfile_invalidUTF8BecomesReplacementCharacters(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "\ufeff{\"profile_key\":\"k\",\"name\":\"caf\xe9\"}")
	})
	p, err := c.GetProfile(context.Background(), "k")
	if err != nil || string(p.Raw) != `{"profile_key":"k","name":"caf`+"\uFFFD"+`"}` {
		t.Errorf("raw %q, err %v", p.Raw, err)
	}
}
