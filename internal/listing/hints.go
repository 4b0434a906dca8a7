package listing

import (
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
)

// The interface document shows no paging, so the client reads what each page
// says about the pages after it the way comparable public APIs say it. Every
// convention is one row of hintRules below: a field (or header) name, what it
// means, and, for a cursor or an offset, the request parameter it is sent
// back under. Names are compared normalised (lower case, letters and digits
// only), so one row serves nextPageToken, next_page_token and NextPageToken.
// To follow a new convention, add a row.

type hintKind int

const (
	hintNextURL    hintKind = iota + 1 // the next page's address (a string, or an object with "href")
	hintCursor                         // an opaque value, sent back under param
	hintNextPage                       // the next page's number, sent as "page" (or an address)
	hintPage                           // this page's number
	hintPages                          // how many pages there are
	hintTotal                          // how many profiles there are in all
	hintHasMore                        // whether there is more after this page
	hintIsLast                         // whether this is the last page
	hintOffset                         // this page's offset, sent back under the field's own name
	hintNextOffset                     // the next page's offset, sent as "offset"
	hintPageSize                       // the page size the service used
)

type hintRule struct {
	names []string // normalised names
	kind  hintKind
	param string // request parameter for hintCursor; "" elsewhere
}

var hintRules = []hintRule{
	{names: []string{"next", "nexturl", "nextpageurl", "nextlink", "nexthref", "odatanextlink", "nextpagelink"}, kind: hintNextURL},
	{names: []string{"nextpagetoken"}, kind: hintCursor, param: "pageToken"},
	{names: []string{"nextcursor", "cursor", "nextpagecursor"}, kind: hintCursor, param: "cursor"},
	{names: []string{"nexttoken"}, kind: hintCursor, param: "nextToken"},
	{names: []string{"nextmarker"}, kind: hintCursor, param: "marker"},
	{names: []string{"continuationtoken"}, kind: hintCursor, param: "continuationToken"},
	{names: []string{"endcursor"}, kind: hintCursor, param: "after"}, // GraphQL-style pageInfo
	{names: []string{"nextpage", "nextpagenumber"}, kind: hintNextPage},
	{names: []string{"page", "currentpage", "pagenumber", "pageindex", "number"}, kind: hintPage},
	{names: []string{"totalpages", "pagecount", "lastpage", "numpages", "pages"}, kind: hintPages},
	{names: []string{"total", "totalcount", "totalelements", "totalitems", "totalresults", "totalsize", "totalrecords", "count", "odatacount"}, kind: hintTotal},
	{names: []string{"hasmore", "hasnext", "hasnextpage", "more", "hasmoreitems", "hasmoreresults", "moreresults"}, kind: hintHasMore},
	{names: []string{"last", "islast", "islastpage"}, kind: hintIsLast},
	{names: []string{"offset", "startat", "start", "skip"}, kind: hintOffset},
	{names: []string{"nextoffset"}, kind: hintNextOffset},
	{names: []string{"limit", "perpage", "pagesize", "size", "maxresults", "pagelen"}, kind: hintPageSize},
}

// headerRules read paging headers; their names are normalised too.
var headerRules = []hintRule{
	{names: []string{"xnextpage"}, kind: hintNextPage},
	{names: []string{"xpage", "xcurrentpage"}, kind: hintPage},
	{names: []string{"xtotalpages", "xpagecount"}, kind: hintPages},
	{names: []string{"xtotalcount", "xtotal", "totalcount"}, kind: hintTotal},
	{names: []string{"xhasmore", "hasmore"}, kind: hintHasMore},
	{names: []string{"xnextoffset", "nextoffset"}, kind: hintNextOffset},
	{names: []string{"xnextcursor", "xcontinuationtoken"}, kind: hintCursor, param: "cursor"},
	{names: []string{"xperpage", "xpagesize"}, kind: hintPageSize},
}

// bodyRule returns the rule for a body field's name, or nil. Beyond the
// table, a name that starts with "total" or ends in "count" (allProfilesCount,
// total_profiles) is a total, unless it speaks of pages.
func bodyRule(name string) *hintRule {
	n := normaliseName(name)
	if r := lookupRule(hintRules, n); r != nil {
		return r
	}
	if !strings.Contains(n, "page") && (strings.HasPrefix(n, "total") || strings.HasSuffix(n, "count")) {
		return &totalRule
	}
	return nil
}

var totalRule = hintRule{kind: hintTotal}

// headerRule returns the rule for a header's name, or nil.
func headerRule(name string) *hintRule {
	return lookupRule(headerRules, normaliseName(name))
}

func lookupRule(rules []hintRule, normalised string) *hintRule {
	for i := range rules {
		for _, m := range rules[i].names {
			if normalised == m {
				return &rules[i]
			}
		}
	}
	return nil
}

func normaliseName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hints is what one page says about the pages after it. A number or flag not
// said is nil; the first value found for each wins, outer levels first.
type hints struct {
	nextURL     string // a next-page address, from the body or a header
	nextUnknown string // a "next" value that is neither an address nor a known cursor
	cursor      string
	cursorParam string
	nextPage    *int
	page        *int
	pages       *int
	total       *int
	hasMore     *bool
	isLast      *bool
	offset      *int
	offsetParam string
	nextOffset  *int
	pageSize    *int
	explicitEnd bool // a next-page field present and null or empty
}

// maxHintDepth is how deep into an envelope paging fields are looked for:
// {"meta": {"page": {"totalElements": …}}} is three levels.
const maxHintDepth = 3

// readBodyHints reads paging fields from an envelope object, skipping arrays
// (the records are in one), at most maxHintDepth levels deep.
func (h *hints) readBodyHints(obj []byte, depth int) {
	var groups [][]byte
	// A number under "items" is a total only beside a page count, as
	// json-server's {"items": 250, "pages": 25, "data": […]}: elsewhere it
	// may be anything.
	var items []byte
	pagesHere := false
	jsonscan.EachField(obj, func(lit, value []byte) bool {
		name := jsonscan.Unquote(lit)
		r := bodyRule(name)
		switch {
		case normaliseName(name) == "items":
			items = value
		case r != nil && r.kind == hintPages:
			pagesHere = true
		}
		switch jsonscan.FirstByte(value) {
		case '[':
			return true
		case '{':
			if href, ok := jsonscan.Field(value, "href"); ok && jsonscan.FirstByte(href) == '"' && r != nil && r.kind == hintNextURL {
				h.setNext(jsonscan.Unquote(href))
				return true
			}
			if depth < maxHintDepth {
				groups = append(groups, value)
			}
			return true
		}
		if r != nil {
			h.apply(r, name, value)
		}
		return true
	})
	if pagesHere && items != nil {
		setIntOnce(&h.total, items)
	}
	for _, g := range groups {
		h.readBodyHints(g, depth+1)
	}
}

// readHeaderHints reads paging headers.
func (h *hints) readHeaderHints(hd http.Header) {
	for _, name := range slices.Sorted(maps.Keys(hd)) {
		if r := headerRule(name); r != nil && len(hd[name]) > 0 {
			v := strings.TrimSpace(hd[name][0])
			if v == "" {
				if r.kind == hintNextPage {
					h.explicitEnd = true // GitLab's X-Next-Page is empty on the last page
				}
				continue
			}
			lit, _ := json.Marshal(v)
			h.apply(r, name, lit)
		}
	}
}

// apply records one scalar value under its rule. JSON null or an empty
// string on a next-page field means there is no next page.
func (h *hints) apply(r *hintRule, name string, value []byte) {
	s, isString := jsonscan.ScalarString(value)
	switch r.kind {
	case hintNextURL:
		switch {
		case !isString || s == "":
			h.explicitEnd = h.explicitEnd || isNullOrEmpty(value)
		case isLink(s):
			h.setNext(s)
		case h.nextUnknown == "":
			h.nextUnknown = name
		}
	case hintCursor:
		switch {
		case isNullOrEmpty(value) || s == "":
			h.explicitEnd = true
		case isLink(s):
			h.setNext(s)
		case h.cursor == "":
			h.cursor, h.cursorParam = s, r.param
		}
	case hintNextPage:
		switch n, ok := hintInt(value); {
		case ok:
			setOnce(&h.nextPage, n)
		case isString && isLink(s):
			h.setNext(s)
		case isNullOrEmpty(value):
			h.explicitEnd = true
		}
	case hintPage:
		setIntOnce(&h.page, value)
	case hintPages:
		setIntOnce(&h.pages, value)
		if b, ok := hintBool(value); ok && normaliseName(name) == "lastpage" && h.isLast == nil {
			h.isLast = &b // "last_page": true is a flag, "last_page": 5 a page count
		}
	case hintTotal:
		setIntOnce(&h.total, value)
	case hintHasMore:
		if b, ok := hintBool(value); ok && h.hasMore == nil {
			h.hasMore = &b
		}
	case hintIsLast:
		if b, ok := hintBool(value); ok && h.isLast == nil {
			h.isLast = &b
		}
	case hintOffset:
		if h.offset == nil {
			if n, ok := hintInt(value); ok {
				h.offset, h.offsetParam = &n, name
			}
		}
	case hintNextOffset:
		setIntOnce(&h.nextOffset, value)
	case hintPageSize:
		setIntOnce(&h.pageSize, value)
	}
}

func (h *hints) setNext(s string) {
	if h.nextURL == "" && s != "" {
		h.nextURL = s
	}
}

func setIntOnce(dst **int, value []byte) {
	if n, ok := hintInt(value); ok {
		setOnce(dst, n)
	}
}

func setOnce(dst **int, n int) {
	if *dst == nil {
		*dst = &n
	}
}

// hintInt reads a count or a page number sent as a number (5, 5.0) or a
// string ("5"). Fractions, negatives and absurd values are not hints.
func hintInt(value []byte) (int, bool) {
	s, _ := jsonscan.ScalarString(value)
	return countText(s)
}

// countText reads a count or page number written as text ("5", "5.0").
func countText(s string) (int, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// hintBool reads a flag sent as true/false, "true"/"false", or 1/0.
func hintBool(value []byte) (bool, bool) {
	s, _ := jsonscan.ScalarString(value)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true, true
	case "false", "0", "no":
		return false, true
	}
	return false, false
}

func isNullOrEmpty(value []byte) bool {
	s, isString := jsonscan.ScalarString(value)
	return s == "" || !isString && s == "null"
}

// isLink tells a next-page address from an opaque cursor.
func isLink(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") ||
		strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?")
}
