package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/paceredis"
)

// TestSharePace_aPauseReachesTheOtherRuns: a pause the service asked of
// one client holds another with the same token, sharing the directory, and
// not one with another token.
func TestSharePace_aPauseReachesTheOtherRuns(t *testing.T) {
	t.Parallel()
	var refused atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refused.CompareAndSwap(false, true) {
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, `{"profile_key":"a"}`)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	shared := func(token string) *Client {
		return clientFor(t, srv.URL+"/api/v1", func(c *Config) {
			c.SharePace, c.PaceDir, c.MaxRetries, c.Token, c.MaxWait = true, dir, 0, token, 30*time.Second
		})
	}
	if _, err := shared(testToken).GetProfile(context.Background(), "a"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first run: %v, want the refusal", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := shared(testToken).GetProfile(ctx, "a"); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "waiting for the rate limit") {
		t.Fatalf("second run with the token: %v, want the 20 s pause to outlast its deadline", err)
	}
	if _, err := shared(testToken+"x").GetProfile(ctx, "a"); err != nil {
		t.Fatalf("a run with another token: %v", err)
	}
}

// TestSharePace_aDirectoryItCannotUseLeavesItAlone: the plan goes on at its
// own pace, and a debug line says why.
func TestSharePace_aDirectoryItCannotUseLeavesItAlone(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o600)
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"profile_key":"a"}`)
	}, func(c *Config) { c.SharePace, c.PaceDir = true, filepath.Join(file, "pace") })
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)
	for range 2 {
		if _, err := c.GetProfile(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "not shared with other runs"); n != 1 || !strings.Contains(logs.String(), `"@level":"debug"`) ||
		!strings.Contains(logs.String(), "not a directory") {
		t.Fatalf("want one debug line saying why, got %d in:\n%s", n, logs.String())
	}
}

// TestSharePace_aStoreThatCanNeverWorkIsToldOnce: a Redis that refuses the
// password is the client's StoreFault once, with its cause and no
// password, while reads go on at their own pace; a Redis only gone is no
// fault.
func TestSharePace_aStoreThatCanNeverWorkIsToldOnce(t *testing.T) {
	t.Parallel()
	const pw = "s3cret-redis-Pw"
	d, _ := daemons.Redis(t, true, "user default off", "user runner on >"+pw+" ~browserprofile:pace:* "+paceredis.ACL)
	gone := daemons.New(t, "redis-server", true)
	for _, tc := range []struct{ store, want string }{
		{"redis://runner:wrong-" + pw + "@" + d.Addr, "refused the user or password"},
		{"redis://runner:" + pw + "@" + gone.Addr, ""},
	} {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"profile_key":"a"}`)
		}, func(c *Config) { c.SharePace, c.PaceStore = true, tc.store })
		if _, err := c.GetProfile(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		fault := c.StoreFault()
		if tc.want == "" {
			if fault != nil {
				t.Errorf("a Redis only gone: fault %v", fault)
			}
			continue
		}
		if fault == nil || !strings.Contains(fault.Error(), tc.want) || strings.Contains(fault.Error(), "s3cret") {
			t.Fatalf("fault %v: want one that %s, without the password", fault, tc.want)
		}
		if _, err := c.GetProfile(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		if again := c.StoreFault(); again != nil {
			t.Fatalf("told again: %v", again)
		}
	}
}
