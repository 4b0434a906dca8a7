package standin

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Jitter holds each request a random time, up to the jitter, before it is
// counted, and Work after it was counted and accepted: not all alike, none
// longer.
func TestJitterAndWork(t *testing.T) {
	t.Parallel()
	const hold = 40 * time.Millisecond
	for _, opts := range []Options{{Jitter: hold}, {Work: hold}} {
		s := New(opts)
		var shortest, longest time.Duration = time.Hour, 0
		for range 20 {
			start := time.Now()
			s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
			took := time.Since(start)
			shortest, longest = min(shortest, took), max(longest, took)
		}
		if longest > hold+200*time.Millisecond || longest-shortest < hold/4 {
			t.Errorf("%+v: 20 requests held %v to %v, want between none and %v, not all alike", opts, shortest, longest, hold)
		}
	}
}

// A request refused is answered at once, whatever the work an accepted one
// takes.
func TestWorkIsForAcceptedRequests(t *testing.T) {
	t.Parallel()
	s := New(Options{Work: 10 * time.Second, RateLimit: 0.001, RateBurst: 1})
	go s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
	time.Sleep(10 * time.Millisecond) // the first, accepted, is at work
	start := time.Now()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusTooManyRequests || time.Since(start) > 5*time.Second {
		t.Errorf("the second request: %d after %v, want 429 at once", rec.Code, time.Since(start))
	}
}

// With MaxInFlight requests being worked on, the next is refused at once;
// once one is answered, another is accepted.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	s := New(Options{MaxInFlight: 2})
	s.inFlight.Enter(2) // two at work
	s.inFlight.Enter(2)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("a third request: %d, Retry-After %q; want 429 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	s.inFlight.Leave() // one answered
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code == http.StatusTooManyRequests {
		t.Errorf("with one at work: %d, want it accepted", rec.Code)
	}
	if !s.inFlight.Enter(2) || s.inFlight.Enter(2) {
		t.Error("the answered request still counted at work, or not counted out")
	}
}

// LimitStatus answers a rate limit with another status, the same headers
// kept.
func TestLimitStatus(t *testing.T) {
	t.Parallel()
	s := New(Options{RateLimit: 0.001, RateBurst: 1, LimitStatus: http.StatusForbidden})
	for i := range 2 {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if refused := rec.Code == http.StatusForbidden; refused != (i == 1) || refused && rec.Header().Get("Retry-After") == "" {
			t.Errorf("request %d: %d, Retry-After %q; want only the second refused, with 403 and a Retry-After", i+1, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
}

// A latency holds each request half of it before it is counted, and each
// answer, refusals included, the other half.
func TestLatency_holdsBothWays(t *testing.T) {
	t.Parallel()
	s := New(Options{Latency: 60 * time.Millisecond, RateLimit: 1, RateBurst: 1, Environments: DemoEnvironments()})
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/development/api/v1/browsers", nil)
		req.Header.Set("Authorization", "Bearer "+DemoDevelopmentToken)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != want || took < 60*time.Millisecond {
			t.Errorf("HTTP %d after %s, want %d after 60ms or more", resp.StatusCode, took, want)
		}
	}
}
