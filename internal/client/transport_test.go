package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
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
// with. How few are refused is the model's promise, which a busy machine
// can push past here (a request held up on its way bunches with the next):
// internal/pace holds it in virtual time, against the same limiters
// (TestPacer_unannounced).
func TestTransport_readsThroughARateLimit(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]standin.Options{
		"429 with Retry-After":       {RateLimit: 50, RateBurst: 10},
		"429 without Retry-After":    {RateLimit: 50, RateBurst: 10, RetryAfterForm: "none"},
		"403 with X-RateLimit-Reset": {RateLimit: 50, RateBurst: 10, LimitStatus: http.StatusForbidden, RetryAfterForm: "reset"},
		"fixed window":               {RateLimit: 50, RateWindow: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := readsAgainst(t, 100, opts)
			if s.Limited.Load() == 0 {
				t.Errorf("none of %d requests refused; want the limit met", s.Requests.Load())
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

// Through the limiters services put in front of their APIs, real ones run
// on loopback for the test, neither of which says when to come back: the
// limit is met, the list comes back whole, every read succeeds, and the
// reads' tally is the limiter's own log. How fast the reads go, and how
// many are refused, is make bench's to measure (BenchmarkPacing, through
// the same limiters): here the process shares its CPUs with every other
// test, and how many are refused grows with their load.
func TestTransport_readsThroughRealLimiters(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]frontLimiter{
		"nginx limit_req":                      startNginx,
		"HAProxy request rate, refusals count": startHAProxy,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const n = 150
			s := standin.New(standin.Options{Paging: "link", PageSize: 25,
				Environments: []standin.Environment{{Name: "development", Token: testToken, Profiles: standin.Generate(n)}}})
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			addr, statuses := start(t, srv.Listener.Addr().String())
			// The provider's retry settings: with no Retry-After, they bound
			// the probes that outlast a window.
			c := clientFor(t, "http://"+addr+"/development/api/v1", providerRetries)
			ctx, tally := WithTally(context.Background())
			list, err := c.ListProfiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(list.Profiles); !slices.Equal(got, wantKeys(n)) {
				t.Fatalf("listed %d profiles through the limiter, want %d", len(got), n)
			}
			readAllIn(ctx, t, c, n)
			requests, counted, _ := tally.Counts()
			all := daemons.AtLeast(statuses, requests)
			refused := daemons.Refusals(all)
			t.Logf("%d of %d requests refused", refused, len(all))
			if counted != refused || requests != len(all) {
				t.Errorf("the reads' tally: %d requests, %d refused; the limiter answered %d, refused %d", requests, counted, len(all), refused)
			}
			if refused == 0 {
				t.Errorf("none of %d requests refused: want the limit met", len(all))
			}
		})
	}
}

// frontLimiter starts a real limiter on loopback in front of upstream, for
// the test, and returns its address and what gives the status of every
// request it answered so far.
type frontLimiter func(t testing.TB, upstream string) (addr string, statuses func() []string)

func startNginx(t testing.TB, upstream string) (string, func() []string) {
	return daemons.Nginx(t, upstream, false)
}

// startNginxQueued is nginx's limit_req without nodelay: up to 20 requests
// that come sooner than its rate wait their turn, the rest are refused.
func startNginxQueued(t testing.TB, upstream string) (string, func() []string) {
	return daemons.NginxLimit(t, upstream, false, "burst=20", 0)
}

func startHAProxy(t testing.TB, upstream string) (string, func() []string) {
	return daemons.HAProxy(t, upstream, false)
}

// readsAgainst reads n profiles at once, through one client, from the
// stand-in limited by opts, and checks that every read succeeds.
func readsAgainst(t *testing.T, n int, opts standin.Options) *standin.Server {
	t.Helper()
	c, s := standinClient(t, n, opts)
	readAll(t, c, n)
	return s
}

// readAll reads the profiles of standin.Generate(n) at once, through c, and
// checks that every read succeeds.
func readAll(t *testing.T, c *Client, n int) {
	t.Helper()
	readAllIn(context.Background(), t, c, n)
}

// readAllIn is readAll in ctx.
func readAllIn(ctx context.Context, t *testing.T, c *Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(ctx, fmt.Sprintf("bp_gen_%07d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
