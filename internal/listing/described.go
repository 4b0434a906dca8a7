package listing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/jsonscan"
)

// Paging describes a service whose paging fits no convention: exactly
// one of NextFrom, PageParam and OffsetParam is set. It says how to find the
// next page, and nothing more: totals, page counts and flags are read and
// checked as they are without it (paging.go).
type Paging struct {
	// NextFrom is where each response holds the next page's cursor or
	// address: a dot-separated path in the JSON body ("meta.next_cursor"),
	// or "header:<Name>"; "header:Link" is the Link header's rel="next".
	NextFrom string
	// NextParam is the request parameter that carries a cursor; a value that
	// is an address is requested as it is.
	NextParam string
	// PageParam is the request parameter of a page number, sent on every
	// request from FirstPage on.
	PageParam string
	FirstPage int
	// OffsetParam is the request parameter of the count of records received
	// so far, sent on every request (0 on the first).
	OffsetParam string
	// PageSizeParam and PageSize, when set, are sent with every request
	// built by the client.
	PageSizeParam string
	PageSize      int
	// TotalFrom, when set, is where each response holds the number of
	// profiles in all, in the form of NextFrom; it wins over the
	// conventional names.
	TotalFrom string
}

// readTotal applies TotalFrom to a page's hints.
func (pc *Paging) readTotal(h *hints, resp *Page) {
	if pc.TotalFrom == "" {
		return
	}
	if n, ok := countText(describedValue(pc.TotalFrom, resp)); ok {
		h.total = &n
	}
}

// describedNext follows the paging setting to the next page.
func (p *pager) describedNext(resp *Page, page listPage, _ hints, cl claims) nextPage {
	pc := p.opts.Paging
	n := len(page.profiles)
	switch {
	case pc.NextFrom != "":
		return p.nextFrom(resp)
	case cl.end:
		return nextPage{}
	case n == 0:
		return nextPage{why: fmt.Sprintf("page %d was empty", p.pages)}
	case pc.PageSize > 0 && n < pc.PageSize:
		return nextPage{why: fmt.Sprintf("page %d held %d profile(s), fewer than paging.page_size (%d)", p.pages, n, pc.PageSize)}
	case pc.PageParam != "":
		return nextPage{url: withParam(resp.URL, pc.PageParam, strconv.Itoa(pc.FirstPage+p.pages)), counted: true}
	}
	return nextPage{url: withParam(resp.URL, pc.OffsetParam, strconv.Itoa(p.received)), counted: true}
}

// nextFrom reads the next page's address or cursor at paging.next_from.
// Finding nothing means the end, unless the page claims more.
func (p *pager) nextFrom(resp *Page) nextPage {
	pc := p.opts.Paging
	v := describedValue(pc.NextFrom, resp)
	switch {
	case v == "":
		return nextPage{why: fmt.Sprintf("paging.next_from (%q) found nothing on page %d", pc.NextFrom, p.pages)}
	case isLink(v):
		return nextPage{url: resolve(resp.URL, v)}
	case pc.NextParam == "":
		return nextPage{claim: "more pages (" + pc.NextFrom + " is set)",
			why: fmt.Sprintf("paging.next_from (%q) holds a value that is not an address, and paging.next_param does not name the request parameter to send it in", pc.NextFrom)}
	}
	return nextPage{url: withParam(resp.URL, pc.NextParam, v)}
}

// describedValue reads the value at a paging location: a header (the Link
// header's rel="next" target, for "header:Link"), or a dot-separated path of
// object fields in the body. A missing value, null, false or "" is "".
func describedValue(from string, resp *Page) string {
	if name, ok := strings.CutPrefix(from, "header:"); ok {
		if strings.EqualFold(name, "Link") {
			return linkNext(resp.Header)
		}
		return strings.TrimSpace(resp.Header.Get(name))
	}
	value, ok := jsonscan.Walk(resp.Body, from)
	if !ok {
		return ""
	}
	s, isString := jsonscan.ScalarString(value)
	if !isString && (s == "null" || s == "false" || jsonscan.FirstByte(value) == '{' || jsonscan.FirstByte(value) == '[') {
		return ""
	}
	return s
}
