package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
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
