package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// The pacer's model is tested in virtual time (internal/pace); these tests
// check that the client puts every attempt through it, against a real
// server on loopback, by counts the service saw, not by time.

func TestTransport_capsRequestsInFlight(t *testing.T) {
	t.Parallel()
	var cur, peak atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		v := cur.Add(1)
		for {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		cur.Add(-1)
		io.WriteString(w, `{"profile_key":`+quote(path.Base(r.URL.Path))+`}`)
	}, func(c *Config) { c.MaxConcurrent = 3 })
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), strings.Repeat("k", i+1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if peak.Load() > 3 {
		t.Errorf("%d requests in flight, cap 3", peak.Load())
	}
}

// Every read succeeds through a limiter that refuses, whatever it answers
// with, and few requests are refused.
func TestTransport_readsThroughARateLimit(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]standin.Options{
		"429 with Retry-After":       {RateLimit: 50, RateBurst: 10},
		"403 with X-RateLimit-Reset": {RateLimit: 50, RateBurst: 10, LimitStatus: http.StatusForbidden, RetryAfterForm: "reset"},
		"fixed window":               {RateLimit: 50, RateWindow: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := readsAgainst(t, 100, opts)
			if limited, total := s.Limited.Load(), s.Requests.Load(); limited == 0 || limited*10 > total {
				t.Errorf("%d of %d requests refused; want some, and few", limited, total)
			}
		})
	}
}

// A quota the service announces on every answer, in either family, is
// obeyed before any refusal: reads wait for the window's reset instead of
// being refused.
func TestTransport_obeysAnAnnouncedQuota(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"github", "ietf"} {
		t.Run(family, func(t *testing.T) {
			t.Parallel()
			s := readsAgainst(t, 30, standin.Options{Quota: 12, QuotaWindow: 400 * time.Millisecond, Announce: family})
			if s.Limited.Load() != 0 {
				t.Errorf("%d of %d requests refused", s.Limited.Load(), s.Requests.Load())
			}
		})
	}
}

// readsAgainst reads n profiles at once, through one client, from the
// stand-in limited by opts, and checks that every read succeeds.
func readsAgainst(t *testing.T, n int, opts standin.Options) *standin.Server {
	t.Helper()
	c, s := standinClient(t, n, opts)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), fmt.Sprintf("bp_gen_%07d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return s
}
