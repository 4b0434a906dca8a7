package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The interface document shows no paging; comparable services reach further
// pages through a Link header, a next-page URL in the envelope, a page number
// with a total, or next-offset/has-more headers. Every one is followed, but
// only on the base address's own scheme, host and port, and a response that
// says there is more without a safe way to reach it yields a warning: never
// a silent truncation.

// List is the result of ListProfiles.
type List struct {
	Profiles []Profile // sorted by Key in byte order, keys unique
	Warnings []string  // the list may be incomplete, and why
}

// pageHints is what one page says about the pages after it.
type pageHints struct {
	next    string // next-page URL from the body
	nextNum int    // next page number from the body
	page    int    // this page's number
	pages   int    // number of pages
	total   int    // number of profiles in all pages; -1 when not said
	hasMore *bool
}

var (
	nextURLFields  = []string{"next", "next_url", "nextUrl", "next_page_url", "nextPageUrl", "next_link", "nextLink", "@odata.nextLink", "href"}
	pageFields     = []string{"page", "current_page", "currentPage", "page_number", "pageNumber"}
	pagesFields    = []string{"total_pages", "totalPages", "page_count", "pageCount", "last_page", "lastPage"}
	totalFields    = []string{"total", "total_count", "totalCount", "count", "total_items", "totalItems", "total_results", "totalResults"}
	hasMoreFields  = []string{"has_more", "hasMore", "has_next", "hasNext", "more"}
	nextPageFields = []string{"next_page", "nextPage"}
	// Objects that conventionally group paging fields.
	pagingGroups = []string{"links", "_links", "paging", "pagination", "meta", "page_info", "pageInfo", "next"}
)

// collect reads paging fields from one envelope object and the groups in it.
func (h *pageHints) collect(obj map[string]json.RawMessage) {
	if h.total == 0 {
		h.total = -1
	}
	h.read(obj)
	for _, g := range pagingGroups {
		if firstByte(obj[g]) == '{' {
			var inner map[string]json.RawMessage
			if json.Unmarshal(obj[g], &inner) == nil {
				h.read(inner)
			}
		}
	}
}

func (h *pageHints) read(obj map[string]json.RawMessage) {
	for _, f := range nextURLFields {
		var s string
		if json.Unmarshal(obj[f], &s) == nil && isLink(s) && h.next == "" {
			h.next = s
		}
	}
	setInt(obj, nextPageFields, &h.nextNum)
	setInt(obj, pageFields, &h.page)
	setInt(obj, pagesFields, &h.pages)
	if h.total < 0 {
		var n int
		if setInt(obj, totalFields, &n) {
			h.total = n
		}
	}
	for _, f := range hasMoreFields {
		var b bool
		if json.Unmarshal(obj[f], &b) == nil && obj[f] != nil && h.hasMore == nil {
			h.hasMore = &b
		}
	}
}

// isLink tells a next-page address from an opaque cursor, which cannot be
// followed without knowing the parameter it belongs in.
func isLink(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") ||
		strings.HasPrefix(s, "/") || strings.HasPrefix(s, "?")
}

func setInt(obj map[string]json.RawMessage, fields []string, dst *int) bool {
	for _, f := range fields {
		var n int
		if json.Unmarshal(obj[f], &n) == nil && obj[f] != nil {
			if *dst == 0 {
				*dst = n
			}
			return true
		}
	}
	return false
}

// ListProfiles reads every profile the token can see, following pages.
func (c *Client) ListProfiles(ctx context.Context) (*List, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	var (
		list  List
		total = -1
		seen  = map[string]bool{}
		u     = listURL(c.base)
		warn  = func(format string, args ...any) { list.Warnings = append(list.Warnings, fmt.Sprintf(format, args...)) }
	)
	for pages := 1; ; pages++ {
		seen[u.String()] = true
		resp, err := c.get(ctx, u)
		if err != nil {
			return nil, err
		}
		page, err := decodeListPage(resp.body)
		if err != nil {
			return nil, c.shapeError(u, resp, err)
		}
		list.Profiles = append(list.Profiles, page.profiles...)
		if page.hints.total >= 0 {
			total = page.hints.total
		}

		next, more := nextPage(resp, page, len(list.Profiles), total)
		if next == nil {
			if more {
				warn("The service said there are more profiles than the %d it delivered (page %s) but gave no way to reach them that the provider understands; the list may be incomplete.", len(list.Profiles), u)
			}
			break
		}
		switch {
		case !sameOrigin(c.base, next):
			warn("The next page is at %s, which is not the base address's own scheme, host and port, so it was not requested (the token goes nowhere else); the list may be incomplete.", redactedOrigin(next))
		case seen[next.String()]:
			warn("The service's next page %s was requested already (a paging loop); stopped with %d profiles, the list may be incomplete.", next.Redacted(), len(list.Profiles))
		case len(page.profiles) == 0:
			if total > len(list.Profiles) {
				warn("The service said there are %d profiles but delivered %d before an empty page; the list may be incomplete.", total, len(list.Profiles))
			}
		case pages >= c.cfg.MaxPages:
			warn("Stopped after %d pages, the provider's limit, with %d profiles; the list may be incomplete.", pages, len(list.Profiles))
		default:
			u = next
			continue
		}
		break
	}
	if total > len(list.Profiles) && len(list.Warnings) == 0 {
		warn("The service said there are %d profiles but delivered %d; the list may be incomplete.", total, len(list.Profiles))
	}
	list.Profiles, list.Warnings = sortUnique(list.Profiles, list.Warnings)
	return &list, nil
}

// nextPage returns the address of the page after resp, or nil. more reports
// that the response claims further profiles even when there is no address.
func nextPage(resp *response, page listPage, have, total int) (next *url.URL, more bool) {
	h := page.hints
	more = (h.hasMore != nil && *h.hasMore) || total > have || (h.page > 0 && h.pages > h.page)
	if h.hasMore != nil && !*h.hasMore {
		return nil, false
	}
	if link := linkNext(resp.header); link != "" {
		return resolve(resp.url, link), true
	}
	if h.next != "" {
		return resolve(resp.url, h.next), true
	}
	if h.nextNum > 0 {
		return withQuery(resp.url, "page", h.nextNum), true
	}
	if h.page > 0 && more {
		return withQuery(resp.url, "page", h.page+1), true
	}
	if off := firstHeader(resp.header, "X-Next-Offset", "Next-Offset"); off != "" && !strings.EqualFold(firstHeader(resp.header, "X-Has-More", "Has-More"), "false") {
		if n, err := strconv.Atoi(off); err == nil && n >= 0 {
			return withQuery(resp.url, "offset", n), true
		}
	}
	if strings.EqualFold(firstHeader(resp.header, "X-Has-More", "Has-More"), "true") {
		more = true
	}
	if n, err := strconv.Atoi(firstHeader(resp.header, "X-Total-Count", "Total-Count")); err == nil && n > have {
		more = true
	}
	return nil, more
}

// linkNext returns the target of a Link header's rel="next" entry (RFC 8288).
func linkNext(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			segs := strings.Split(part, ";")
			target := strings.TrimSpace(segs[0])
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range segs[1:] {
				name, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(name), "rel") &&
					slices.Contains(strings.Fields(strings.ToLower(strings.Trim(val, `"`))), "next") {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}

func resolve(base *url.URL, ref string) *url.URL {
	r, err := url.Parse(ref)
	if err != nil {
		// An unparsable link cannot be followed; treat it as off-host.
		return &url.URL{Scheme: "invalid", Host: "invalid"}
	}
	return base.ResolveReference(r)
}

func withQuery(u *url.URL, name string, n int) *url.URL {
	next := *u
	q := next.Query()
	q.Set(name, strconv.Itoa(n))
	next.RawQuery = q.Encode()
	return &next
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			return v
		}
	}
	return ""
}

// sortUnique sorts by key in byte order, so that plans are stable whatever
// order the service sends, and keeps the first of duplicate keys (pages that
// overlap while the list changes) with a warning.
func sortUnique(ps []Profile, warnings []string) ([]Profile, []string) {
	slices.SortStableFunc(ps, func(a, b Profile) int { return strings.Compare(a.Key, b.Key) })
	out := ps[:0]
	dups := 0
	for _, p := range ps {
		if len(out) > 0 && p.Key == out[len(out)-1].Key {
			dups++
			continue
		}
		out = append(out, p)
	}
	if dups > 0 {
		warnings = append(warnings, fmt.Sprintf("The service returned %d duplicate profile_key value(s) (pages overlapping while the list changed?); each key is kept once.", dups))
	}
	return out, warnings
}
