package client

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

// Each attempt's wait, from a seeded source: between the base (min_wait
// doubled per attempt, up to max_wait) and twice the base, never below
// min_wait, never above max_wait.
func TestBackoff_growsFromMinWaitToMaxWait(t *testing.T) {
	t.Parallel()
	w := newWaits(rand.NewPCG(1, 2))
	minWait, maxWait := 2*time.Second, 30*time.Second
	bounds := [][2]time.Duration{
		{2 * time.Second, 4 * time.Second}, {4 * time.Second, 8 * time.Second},
		{8 * time.Second, 16 * time.Second}, {16 * time.Second, 30 * time.Second},
		{30 * time.Second, 30 * time.Second}, {30 * time.Second, 30 * time.Second},
	}
	for range 200 {
		for attempt, b := range bounds {
			if got := w.backoff(minWait, maxWait, attempt, nil); got < b[0] || got > b[1] {
				t.Fatalf("attempt %d waited %s, want %s to %s", attempt, got, b[0], b[1])
			}
		}
	}
	// The draws spread over each window rather than sit at one end.
	var low, high int
	for range 200 {
		switch got := w.backoff(minWait, maxWait, 0, nil); {
		case got < 3*time.Second:
			low++
		default:
			high++
		}
	}
	if low < 60 || high < 60 {
		t.Errorf("first waits: %d under 3s, %d over, want both sides of the window", low, high)
	}
	if a, b := newWaits(rand.NewPCG(7, 7)).backoff(minWait, maxWait, 2, nil), newWaits(rand.NewPCG(7, 7)).backoff(minWait, maxWait, 2, nil); a != b {
		t.Errorf("one seed drew %s and %s", a, b)
	}
}

// A Retry-After is honoured, held between min_wait and max_wait.
func TestBackoff_retryAfterHeldToMinWait(t *testing.T) {
	t.Parallel()
	w := newWaits(rand.NewPCG(1, 2))
	for v, want := range map[string]time.Duration{"0": 2 * time.Second, "1": 2 * time.Second, "5": 5 * time.Second, "29": 29 * time.Second} {
		resp := &http.Response{Header: http.Header{"Retry-After": {v}}}
		if got := w.backoff(2*time.Second, 30*time.Second, 3, resp); got != want {
			t.Errorf("Retry-After %s: waited %s, want %s", v, got, want)
		}
	}
}

// Refused connections end a read after maxRefused attempts, however many
// retries are allowed: nothing listening refuses for good.
func TestRetry_refusedConnectionsCappedOnTheirOwn(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := clientFor(t, "http://"+addr+"/api/v1", func(c *Config) { c.MaxRetries = 10 })
	_, err = c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	if re.Attempts != maxRefused {
		t.Errorf("%d attempts with 10 retries allowed, want %d", re.Attempts, maxRefused)
	}
}

// The attempt count is the retry loop's: a redirect within an attempt is
// not another attempt.
func TestRetry_attemptsCountedByTheRetryLoop(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("moved") == "" {
			http.Redirect(w, r, r.URL.Path+"?moved=1", http.StatusFound)
			return
		}
		n.Add(1)
		w.WriteHeader(503)
	}, func(c *Config) { c.MaxRetries = 2 })
	_, err := c.ListProfiles(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if re.Attempts != 3 || n.Load() != 3 {
		t.Errorf("%d attempts counted, %d answered after a redirect each, want 3", re.Attempts, n.Load())
	}
}

// A request that did not come through fetch has no record of attempts: it
// is not retried blind.
func TestCheckRetry_refusesARequestWithoutItsRecord(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {})
	if retry, err := c.checkRetry(context.Background(), &http.Response{StatusCode: 503}, nil); retry || !errors.Is(err, errNoAttempts) {
		t.Errorf("checkRetry = %v, %v; want false, errNoAttempts", retry, err)
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

// A rate limit's refusal that does not say when to come back goes straight
// back to the pacer; one that does waits as asked; an outage backs off.
func TestBackoff_refusalWithoutRetryAfterWaitsForThePacerOnly(t *testing.T) {
	t.Parallel()
	w := newWaits(rand.NewPCG(1, 2))
	minWait, maxWait := time.Second, 30*time.Second
	for name, c := range map[string]struct {
		resp     *http.Response
		min, max time.Duration
	}{
		"429 alone":                     {&http.Response{StatusCode: 429, Header: http.Header{}}, 0, 0},
		"403 with a Retry-After unread": {&http.Response{StatusCode: 403, Header: http.Header{"Retry-After": {"soon"}}}, 0, 0},
		"429 with Retry-After":          {&http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3"}}}, 3 * time.Second, 3 * time.Second},
		"503 alone":                     {&http.Response{StatusCode: 503, Header: http.Header{}}, 4 * time.Second, 8 * time.Second},
		"no answer":                     {nil, 4 * time.Second, 8 * time.Second},
	} {
		if got := w.backoff(minWait, maxWait, 2, c.resp); got < c.min || got > c.max {
			t.Errorf("%s: waited %s after the third attempt, want %s to %s", name, got, c.min, c.max)
		}
	}
}

// A refusal that asks for no wait counts a quarter of a retry: max_retries
// of 2 allows eight of them, and a whole retry of anything else.
func TestRetry_refusalsWithoutRetryAfterCountAQuarter(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]int{429: 1 + 2*RefusalsPerRetry, 503: 1 + 2} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.WriteHeader(status)
			}, func(c *Config) { c.MaxRetries = 2 })
			_, err := c.ListProfiles(context.Background())
			var re *RequestError
			if !errors.As(err, &re) || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if re.Attempts != want || int(n.Load()) != want || re.StatusCode != status {
				t.Errorf("%d attempts counted, %d answered, last %d; want %d of %d", re.Attempts, n.Load(), re.StatusCode, want, status)
			}
		})
	}
}

// leapClock is virtual time for a single read: whatever its pace waits
// for has passed at once. (With reads at once, a wait for an answer would
// leap too; the model's tests with many requests are internal/pace's.)
type leapClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *leapClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *leapClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// refusingFor answers 429 without Retry-After until the clock passes
// until, then a list; it records when (by the clock) each request came.
func refusingFor(clock *leapClock, until time.Time, at *[]time.Time, mu *sync.Mutex) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		now := clock.Now()
		mu.Lock()
		*at = append(*at, now)
		mu.Unlock()
		if now.Before(until) {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `[{"profile_key":"a"}]`)
	}
}

// on sets a client's clock.
func on(clock *leapClock) func(*Config) { return func(c *Config) { c.Clock = clock } }

// With the provider's defaults, a read outlasts a service that refuses
// every request for a whole minute without Retry-After, in virtual time.
// The first retry goes at the pace the refusal cut; from the second, the
// pacer's probe spaces them, each gap at least the last and none over
// max_wait, so it finds the service again within max_wait of its return,
// in few attempts.
func TestRetry_outlastsAMinuteOfRefusalsWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	clock := &leapClock{now: time.Now()}
	start := clock.Now()
	var (
		mu sync.Mutex
		at []time.Time
	)
	c := newTestClient(t, refusingFor(clock, start.Add(time.Minute), &at, &mu), providerRetries, on(clock))
	list, err := c.ListProfiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Profiles) != 1 {
		t.Fatalf("%d profiles", len(list.Profiles))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) > 1+RefusalsPerRetry*DefaultMaxRetries {
		t.Errorf("%d attempts, more than max_retries allows", len(at))
	}
	for i := 3; i < len(at); i++ {
		gap, last := at[i].Sub(at[i-1]), at[i-1].Sub(at[i-2])
		if gap < last || gap > DefaultMaxWait {
			t.Errorf("attempt %d came %s after the one before, which came %s after its own; want no less, and at most %s", i+1, gap, last, DefaultMaxWait)
		}
	}
	if back := at[len(at)-1].Sub(start.Add(time.Minute)); back > DefaultMaxWait {
		t.Errorf("the service was found again %s after it accepted again; want within %s", back, DefaultMaxWait)
	}
	t.Logf("%d attempts over %s of virtual time", len(at), at[len(at)-1].Sub(start))
}

// A service that never stops refusing ends the read within its bounds:
// attempts by max_retries, time by request_timeout.
func TestRetry_refusalsWithoutRetryAfterEnd(t *testing.T) {
	t.Parallel()
	clock := &leapClock{now: time.Now()}
	var (
		mu sync.Mutex
		at []time.Time
	)
	c := newTestClient(t, refusingFor(clock, clock.Now().Add(24*time.Hour), &at, &mu), providerRetries, on(clock))
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrUnavailable or ErrTimeout", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(at); n > 1+RefusalsPerRetry*DefaultMaxRetries {
		t.Errorf("%d attempts, more than max_retries allows", n)
	}
	if took := at[len(at)-1].Sub(at[0]); took > DefaultTimeout {
		t.Errorf("attempts went on for %s, past request_timeout %s", took, DefaultTimeout)
	}
}
