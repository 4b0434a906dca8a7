package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// However many callers ask, at once or one after another, the list is read
// once.
func TestListProfiles_isReadOncePerClient(t *testing.T) {
	t.Parallel()
	c, s := standinClient(t, 40, standin.Options{Paging: "link", PageSize: 10})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if list, err := c.ListProfiles(context.Background()); err != nil || len(list.Profiles) != 40 {
				t.Errorf("list %v, err %v", list, err)
			}
		}()
	}
	wg.Wait()
	if _, err := c.ListProfiles(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Requests.Load() != 4 {
		t.Errorf("%d requests for a list of 4 pages", s.Requests.Load())
	}
}

// A failure a retry could mend (the service unavailable) is read again by
// the next caller; one it could not (the token rejected) is shared.
func TestListProfiles_readsAgainOnlyAfterAMendableFailure(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		status int
		want   error
		reads  int64
	}{
		"unavailable":    {http.StatusServiceUnavailable, ErrUnavailable, 2},
		"token rejected": {http.StatusUnauthorized, ErrUnauthorized, 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var requests atomic.Int64
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.WriteHeader(tc.status)
			}, func(c *Config) { c.MaxRetries = 0 })
			for range 2 {
				if _, err := c.ListProfiles(context.Background()); !errors.Is(err, tc.want) {
					t.Fatalf("err %v", err)
				}
			}
			if requests.Load() != tc.reads {
				t.Errorf("%d requests, want %d", requests.Load(), tc.reads)
			}
		})
	}
}

// A caller that gives up fails nobody else: the shared read, and the shared
// request, go on for the others.
func TestSharedReads_aCancelledCallerFailsNoOther(t *testing.T) {
	t.Parallel()
	for name, read := range map[string]func(*Client, context.Context) error{
		"list": func(c *Client, ctx context.Context) error { _, err := c.ListProfiles(ctx); return err },
		"one":  func(c *Client, ctx context.Context) error { _, err := c.GetProfile(ctx, "a"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			// Every request is answered once release is closed: one the
			// other caller makes of its own, should the scheduler start it
			// only after the shared one was answered, as well.
			release := make(chan struct{})
			arrived := make(chan struct{}, 2)
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				<-release
				if r.URL.Path == "/api/v1/browsers" {
					io.WriteString(w, `[{"profile_key": "a"}]`)
					return
				}
				io.WriteString(w, `{"profile_key": "a"}`)
			})
			ctx, cancel := context.WithCancel(context.Background())
			first := make(chan error)
			go func() { first <- read(c, ctx) }()
			<-arrived
			second := make(chan error)
			go func() { second <- read(c, context.Background()) }()
			cancel()
			if err := <-first; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled caller: %v", err)
			}
			close(release)
			if err := <-second; err != nil {
				t.Errorf("the other caller: %v", err)
			}
		})
	}
}
