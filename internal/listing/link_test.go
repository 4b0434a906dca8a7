package listing

import (
	"net/http"
	"strings"
	"testing"
)

func TestLinkNext_readsRFC8288(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		headers []string
		want    string
	}{
		{"plain", []string{`<https://a.example/api/v1/browsers?page=2>; rel="next"`}, "https://a.example/api/v1/browsers?page=2"},
		{"comma in target", []string{`<https://a.example/b?page=2&sort=name,asc>; rel="next", <https://a.example/b?page=9>; rel="last"`}, "https://a.example/b?page=2&sort=name,asc"},
		{"semicolon in target", []string{`</b;jsessionid=AB12?page=2>; rel=next`}, "/b;jsessionid=AB12?page=2"},
		{"next after others", []string{`</b?page=1>; rel="first", </b?page=3>; rel="prev last"; title="a, b; c", </b?page=2>; rel="next"`}, "/b?page=2"},
		{"several rels", []string{`</b?page=2>; rel="prefetch NEXT"`}, "/b?page=2"},
		{"quoted comma before next", []string{`</x>; title="one, <two>; rel=next", </b?page=2>; rel="next"`}, "/b?page=2"},
		{"escaped quote", []string{`</x>; title="say \"next\"", </y>; REL="next"`}, "/y"},
		{"several headers", []string{`</b?page=1>; rel="first"`, `</b?page=2>; rel="next"`}, "/b?page=2"},
		{"only the first rel counts", []string{`</a>; rel="prev"; rel="next"`}, ""},
		{"no next", []string{`</b?page=1>; rel="first"`}, ""},
		{"malformed", []string{`https://a.example/b; rel="next"`, `<unclosed; rel="next"`}, ""},
	}
	for _, tc := range cases {
		h := http.Header{"Link": tc.headers}
		if got := linkNext(h); got != tc.want {
			t.Errorf("%s: linkNext = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzLinkHeader(f *testing.F) {
	for _, seed := range []string{`<a>; rel="next"`, `<a,b;c>; rel=next, <d>; rel="last"`, `<a>; title="x, <y>; rel=next"`, `<`, `;;,,"`, `<a>; rel="\`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, l := range parseLinks(v) {
			if strings.Contains(l.target, ">") {
				t.Fatalf("target %q of %q holds a closing angle bracket", l.target, v)
			}
		}
		// A well-formed next link after the fuzzed value is always found.
		h := http.Header{"Link": {v, `<https://x.example/next>; rel="next"`}}
		if got := linkNext(h); got == "" {
			t.Fatalf("no next link found after %q", v)
		}
	})
}
