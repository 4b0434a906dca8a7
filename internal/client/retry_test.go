package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
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
