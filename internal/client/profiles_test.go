package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

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
