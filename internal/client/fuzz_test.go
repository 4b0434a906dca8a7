package client

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// The seed corpora run in the normal test command; `go test -fuzz` explores.

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

func FuzzDecodeListPage(f *testing.F) {
	for _, seed := range []string{
		`[{"profile_key":"a"}]`, `{"data":[{"profile_key":"a","x":{"y":[1,"]"]}}]}`, `{"profiles":[],"totalCount":3}`,
		`{"data":{"items":[{"profile_key":"b\"c"}],"count":1}}`, `[{"profile_key":1e3}]`, `{"a":{"b":{"c":[]}}}`,
		`[`, `[{"profile_key":"a"},]`, `{"data":[{"profile_key":"a"}],"next":"/api/v1/browsers?page=2","has_more":true}`, "\ufeff[]", `"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		page, err := decodeListPage(body)
		if err != nil {
			return
		}
		for _, p := range page.profiles {
			if p.Key == "" || !json.Valid(p.Raw) {
				t.Fatalf("accepted a bad profile %q %q from %q", p.Key, p.Raw, body)
			}
			if key, ok, err := profileKey(p.Raw); err != nil || !ok || key != p.Key {
				t.Fatalf("key %q does not match its record %q", p.Key, p.Raw)
			}
		}
	})
}

func FuzzDecodeProfile(f *testing.F) {
	for _, seed := range []string{`{"profile_key":"a"}`, `{"data":{"profile_key":"a"}}`, `{"data":{"p":{"profile_key":"a"}}}`, `{"profile_key":null}`, `{}`, `[]`, `{"a":"\u00e9"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeProfile(body)
		if err == nil && (p.Key == "" || !json.Valid(p.Raw) || !utf8.Valid([]byte(p.Key)) && utf8.Valid(body)) {
			t.Fatalf("accepted a bad profile %q %q from %q", p.Key, p.Raw, body)
		}
	})
}
