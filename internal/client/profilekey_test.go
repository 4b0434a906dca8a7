package client

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestCheckProfileKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]error{
		"": ErrKeyEmpty, ".": ErrKeyDotSegment, "..": ErrKeyDotSegment,
		"{profile_key}": ErrKeyPlaceholder, "pre-{id}-post": ErrKeyPlaceholder,
		"...": nil, "a.b": nil, " ": nil, "{": nil, "}{": nil, "team/alpha": nil,
	} {
		if err := CheckProfileKey(key); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("%q: %v, want %v", key, err, want)
		}
	}
}

// The seed corpus runs in the normal test command; `go test -fuzz` explores.
func FuzzProfileKeyEncoding(f *testing.F) {
	for _, seed := range []string{"bp_1", "team/alpha", "q?x=1#frag", "100% legit", "café-東京", ".", "..", "...", "", "{x}", "%2F", "a;b", " ", "\x00", "../../admin"} {
		f.Add(seed)
	}
	base, _ := url.Parse("https://api.example.com/api/v1")
	f.Fuzz(func(t *testing.T, key string) {
		if CheckProfileKey(key) != nil {
			return
		}
		u, err := url.Parse(profileURL(base, key).String())
		if err != nil {
			t.Fatalf("key %q: unparsable URL: %v", key, err)
		}
		if u.Host != "api.example.com" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("key %q escaped its segment: %s", key, u)
		}
		seg, ok := strings.CutPrefix(u.EscapedPath(), "/api/v1/browsers/")
		if !ok || strings.Contains(seg, "/") {
			t.Fatalf("key %q is not one path segment: %s", key, u.EscapedPath())
		}
		if got, err := url.PathUnescape(seg); err != nil || got != key {
			t.Fatalf("key %q arrives as %q (%v)", key, got, err)
		}
	})
}

func BenchmarkProfileURL(b *testing.B) {
	base, _ := url.Parse("https://api.example.com/api/v1")
	keys := []string{"bp_prod_01HZX3K9Q2", "team/alpha", "q?x=1#frag", "café-東京 100%"}
	b.ReportAllocs()
	for i := range b.N {
		key := keys[i%len(keys)]
		if CheckProfileKey(key) != nil || profileURL(base, key).String() == "" {
			b.Fatal(key)
		}
	}
}
