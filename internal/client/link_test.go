package client

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

func TestHints_readConventionsAndCoerceValues(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		body  string
		check func(h hints) bool
	}{
		"HAL href":             {`{"_links":{"self":{"href":"/s"},"next":{"href":"/n"}}}`, func(h hints) bool { return h.nextURL == "/n" }},
		"top-level self href":  {`{"href":"/s","items":[]}`, func(h hints) bool { return h.nextURL == "" }},
		"odata":                {`{"@odata.nextLink":"https://x/n","@odata.count":5}`, func(h hints) bool { return h.nextURL == "https://x/n" && *h.total == 5 }},
		"string total":         {`{"total":"5","has_more":"true"}`, func(h hints) bool { return *h.total == 5 && *h.hasMore }},
		"float total":          {`{"total":5.0}`, func(h hints) bool { return *h.total == 5 }},
		"fraction is no total": {`{"total":5.5}`, func(h hints) bool { return h.total == nil }},
		"nested total":         {`{"page":{"totalElements":7,"number":0}}`, func(h hints) bool { return *h.total == 7 && *h.page == 0 }},
		"any Count":            {`{"allProfilesCount":9}`, func(h hints) bool { return *h.total == 9 }},
		"page count not total": {`{"pageCount":3}`, func(h hints) bool { return h.total == nil && *h.pages == 3 }},
		"slack cursor":         {`{"response_metadata":{"next_cursor":"abc"}}`, func(h hints) bool { return h.cursor == "abc" && h.cursorParam == "cursor" }},
		"empty cursor ends":    {`{"response_metadata":{"next_cursor":""}}`, func(h hints) bool { return h.cursor == "" && h.explicitEnd }},
		"google token":         {`{"nextPageToken":"t1"}`, func(h hints) bool { return h.cursorParam == "pageToken" }},
		"aws token":            {`{"NextToken":"t1"}`, func(h hints) bool { return h.cursorParam == "nextToken" }},
		"offset keeps name":    {`{"startAt":10,"maxResults":5}`, func(h hints) bool { return *h.offset == 10 && h.offsetParam == "startAt" && *h.pageSize == 5 }},
		"last_page number":     {`{"last_page":4}`, func(h hints) bool { return *h.pages == 4 && h.isLast == nil }},
		"last_page flag":       {`{"last_page":true}`, func(h hints) bool { return h.pages == nil && *h.isLast }},
		"opaque next":          {`{"next":"abc123"}`, func(h hints) bool { return h.nextURL == "" && h.nextUnknown == "next" }},
		"null next":            {`{"next":null}`, func(h hints) bool { return h.explicitEnd }},
		"records are skipped":  {`{"data":[{"total":99,"next":"/x"}]}`, func(h hints) bool { return h.total == nil && h.nextURL == "" }},
	}
	for name, tc := range cases {
		var h hints
		h.readBodyHints([]byte(tc.body), 0)
		if !tc.check(h) {
			t.Errorf("%s: hints %+v", name, h)
		}
	}
	var h hints
	h.readHeaderHints(http.Header{"X-Total": {"12"}, "X-Next-Page": {"3"}, "X-Page": {"2"}})
	if *h.total != 12 || *h.nextPage != 3 || *h.page != 2 {
		t.Errorf("header hints %+v", h)
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

func FuzzHints(f *testing.F) {
	for _, seed := range []string{`{"total":"5","page":{"number":0,"totalPages":2}}`, `{"next":{"href":1}}`, `{"a":{"b":{"c":{"d":{"total":1}}}}}`, `{"total":1e400}`, `{"offset":-1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeListPage(body); err != nil {
			return
		}
		var h hints
		h.readBodyHints(body, 0)
		for _, n := range []*int{h.total, h.page, h.pages, h.offset, h.nextPage, h.pageSize} {
			if n != nil && *n < 0 {
				t.Fatalf("negative hint from %q: %+v", body, h)
			}
		}
		if h.cursor != "" && h.cursorParam == "" {
			t.Fatalf("a cursor with no parameter from %q", body)
		}
	})
}
