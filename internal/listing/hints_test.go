package listing

import (
	"net/http"
	"testing"
)

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
