package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// PagingMode is one way of paging a list, modelled on a public API's.
type PagingMode struct {
	// Complete is whether a client that knows the conventions reads the
	// whole list without being told how the mode pages. It is false for the
	// modes that misbehave, and for those a client must be told of.
	Complete bool
	serve    func(p *pageRequest) []byte
	// Paging, where set, is the provider block's paging setting (attribute
	// to value) that reads the whole list; page_size goes with
	// page_size_param, and is the stand-in's page size.
	Paging map[string]string
}

// PagingModes are the stand-in's paging conventions (cmd/standin -paging).
var PagingModes = map[string]PagingMode{
	// RFC 8288 Link headers whose targets hold ',' and ';', in two headers,
	// with quoted parameters (GitHub, and servlet containers' ;jsessionid).
	"link": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		if more {
			next := p.link(fmt.Sprintf("/browsers;jsessionid=A1B2,C3?page=%d&sort=name,asc", i+2))
			p.w.Header().Add("Link", fmt.Sprintf(`<%s>; rel="next"; title="next page; sorted, by name"`, next))
		}
		p.w.Header().Add("Link", fmt.Sprintf(`<%s>; rel="first"`, p.link("/browsers?page=1&sort=name,asc")))
		return array(items)
	}},
	// A next-page URL in the envelope, null on the last page.
	"next_url": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		return p.s.listBody(items, len(p.all), map[string]any{"next": p.when(more, p.with("page", i+2))})
	}},
	// A next-page URL under "nextPage", and a self "href" that is not one.
	"next_page_field": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		return object(map[string]any{"href": p.with("page", i+1), "nextPage": p.when(more, p.with("page", i+2)), "total": len(p.all)}, "items", array(items))
	}},
	// HAL, as Spring Data REST: _embedded, _links.next.href, and a page
	// object counted from 0.
	"hal": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 0)
		items, more := p.window(i * p.size)
		links := map[string]any{"self": map[string]string{"href": p.with("page", i)}}
		if more {
			links["next"] = map[string]string{"href": p.with("page", i+1)}
		}
		return object(map[string]any{"_links": links, "page": map[string]int{
			"size": p.size, "totalElements": len(p.all), "totalPages": p.pages(), "number": i,
		}}, "_embedded", object(nil, "profiles", array(items)))
	}},
	// JSON:API: links.next as an {"href"} object, the total under meta.
	"jsonapi": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page[number]", 1)
		items, more := p.window(i * p.size)
		links := map[string]any{"self": p.with("page[number]", i+1)}
		if more {
			links["next"] = map[string]string{"href": p.with("page[number]", i+2)}
		}
		return object(map[string]any{"links": links, "meta": map[string]int{"totalCount": len(p.all)}}, "data", array(items))
	}},
	// OData: value, @odata.nextLink with an opaque $skiptoken, @odata.count.
	"odata": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.cursor("$skiptoken")
		items, more := p.window(off)
		return object(map[string]any{"@odata.count": len(p.all), "@odata.nextLink": p.when(more, p.with("$skiptoken", token(off+len(items))))}, "value", array(items))
	}},
	// Page numbers from 1 with a page count (and the configured shape).
	"page_number": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		return p.s.listBody(items, len(p.all), map[string]any{"page": i + 1, "total_pages": p.pages()})
	}},
	// Page numbers from 0 with a page count.
	"page_zero": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 0)
		items, _ := p.window(i * p.size)
		return object(map[string]any{"page": i, "total_pages": p.pages()}, "data", array(items))
	}},
	// Spring Data's Page: content, number from 0, totalPages, last.
	"spring": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 0)
		items, more := p.window(i * p.size)
		return object(map[string]any{
			"pageable": map[string]int{"pageNumber": i, "pageSize": p.size, "offset": i * p.size},
			"last":     !more, "totalPages": p.pages(), "totalElements": len(p.all), "size": p.size, "number": i,
			"first": i == 0, "numberOfElements": len(items), "empty": len(items) == 0,
		}, "content", array(items))
	}},
	// Page numbers from 1 and a last-page flag, no total.
	"page_last": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		return object(map[string]any{"currentPage": i + 1, "isLast": !more}, "items", array(items))
	}},
	// GitLab's headers: X-Page, X-Per-Page, X-Next-Page (empty on the last
	// page), X-Total, X-Total-Pages; a bare array.
	"gitlab": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		h := p.w.Header()
		h.Set("X-Page", strconv.Itoa(i+1))
		h.Set("X-Per-Page", strconv.Itoa(p.size))
		next := ""
		if more {
			next = strconv.Itoa(i + 2)
		}
		h.Set("X-Next-Page", next)
		h.Set("X-Total", strconv.Itoa(len(p.all)))
		h.Set("X-Total-Pages", strconv.Itoa(p.pages()))
		return array(items)
	}},
	// offset and limit with a total.
	"offset_limit": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.number("offset")
		items, _ := p.window(off)
		return object(map[string]any{"offset": off, "limit": p.size, "total": len(p.all)}, "data", array(items))
	}},
	// Jira: startAt, maxResults, total, isLast, values.
	"start_at": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.number("startAt")
		items, more := p.window(off)
		return object(map[string]any{"startAt": off, "maxResults": p.size, "total": len(p.all), "isLast": !more}, "values", array(items))
	}},
	// skip with a total.
	"skip": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.number("skip")
		items, _ := p.window(off)
		return object(map[string]any{"skip": off, "total": len(p.all)}, "items", array(items))
	}},
	// X-Next-Offset and X-Has-More headers; the list in the configured shape.
	"offset_headers": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.number("offset")
		items, more := p.window(off)
		p.w.Header().Set("X-Has-More", strconv.FormatBool(more))
		if more {
			p.w.Header().Set("X-Next-Offset", strconv.Itoa(off+len(items)))
		}
		return p.s.listBody(items, len(p.all), map[string]any{})
	}},
	// A page number and the page size, no total: read until a short page.
	"short_page": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		return object(map[string]any{"page": i + 1, "per_page": p.size}, "data", array(items))
	}},
	// Google: nextPageToken, sent back as pageToken; absent on the last page.
	"page_token": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.cursor("pageToken")
		items, more := p.window(off)
		fields := map[string]any{}
		if more {
			fields["nextPageToken"] = token(off + len(items))
		}
		return object(fields, "profiles", array(items))
	}},
	// Slack: response_metadata.next_cursor, sent back as cursor; "" at the end.
	"slack": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.cursor("cursor")
		items, more := p.window(off)
		next := ""
		if more {
			next = token(off + len(items))
		}
		return object(map[string]any{"ok": true, "response_metadata": map[string]string{"next_cursor": next}}, "profiles", array(items))
	}},
	// AWS: NextToken, sent back as nextToken.
	"next_token": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.cursor("nextToken")
		items, more := p.window(off)
		return object(map[string]any{"NextToken": p.when(more, token(off+len(items)))}, "Profiles", array(items))
	}},
	// GraphQL-style pageInfo: hasNextPage and endCursor, sent back as after.
	"page_info": {Complete: true, serve: func(p *pageRequest) []byte {
		off := p.cursor("after")
		items, more := p.window(off)
		return object(map[string]any{"pageInfo": map[string]any{"hasNextPage": more, "endCursor": token(off + len(items))}}, "nodes", array(items))
	}},
	// Stripe: has_more, continued with starting_after=<last key>.
	"stripe": {Complete: true, serve: func(p *pageRequest) []byte {
		off := 0
		if after := p.r.URL.Query().Get("starting_after"); after != "" {
			off = slices.IndexFunc(p.all, func(rec json.RawMessage) bool { return keyOf(rec) == after }) + 1
		}
		items, more := p.window(off)
		return object(map[string]any{"object": "list", "url": "/v1/browsers", "has_more": more}, "data", array(items))
	}},
	// Hints as strings, as some gateways send them.
	"string_hints": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		return object(map[string]any{"page": strconv.Itoa(i + 1), "total": strconv.Itoa(len(p.all)), "has_more": strconv.FormatBool(more)}, "data", array(items))
	}},
	// Hints as floats.
	"float_hints": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		return object(map[string]any{"page": float64(i + 1), "total": float64(len(p.all))}, "data", array(items))
	}},
	// A filtered scan: the second page is empty but still links on.
	"empty_middle": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		var items []json.RawMessage
		more := true
		if i != 1 {
			items, more = p.window(max(i-1, 0) * p.size)
		}
		return object(map[string]any{"has_more": more, "next": p.when(more, p.with("page", i+2))}, "data", array(items))
	}},
	// Described in the provider block: a cursor at meta.cursor.next, sent
	// back as after, and the page size as limit, without which it refuses.
	"described": {Paging: map[string]string{"next_from": "meta.cursor.next", "next_param": "after", "page_size_param": "limit"}, serve: func(p *pageRequest) []byte {
		size, err := strconv.Atoi(p.r.URL.Query().Get("limit"))
		if err != nil || size < 1 {
			writeJSON(p.w, http.StatusBadRequest, map[string]string{"error": "limit is required"})
			return nil
		}
		p.size = size
		off := p.cursor("after")
		items, more := p.window(off)
		return object(map[string]any{"meta": map[string]any{"cursor": map[string]any{"next": p.when(more, token(off+len(items)))}}}, "results", array(items))
	}},

	// json-server 0.17: the whole array unless asked for _page (from 1) or
	// _limit; then X-Total-Count, and with _page a Link header with first,
	// prev, next and last. _limit alone, as _start's window, has no Link.
	"json_server": {Complete: true, Paging: map[string]string{"page_param": "_page", "page_size_param": "_limit"}, serve: func(p *pageRequest) []byte {
		q := p.r.URL.Query()
		if n, err := strconv.Atoi(q.Get("_limit")); err == nil && n > 0 {
			p.size = n
		}
		if !q.Has("_page") && !q.Has("_limit") {
			return array(p.all)
		}
		p.w.Header().Set("X-Total-Count", strconv.Itoa(len(p.all)))
		if !q.Has("_page") {
			items, _ := p.window(p.number("_start"))
			return array(items)
		}
		i := p.pageNumber("_page", 1)
		items, more := p.window(i * p.size)
		links := []string{fmt.Sprintf(`<%s>; rel="first"`, p.with("_page", 1))}
		if i > 0 {
			links = append(links, fmt.Sprintf(`<%s>; rel="prev"`, p.with("_page", i)))
		}
		if more {
			links = append(links, fmt.Sprintf(`<%s>; rel="next"`, p.with("_page", i+2)))
		}
		links = append(links, fmt.Sprintf(`<%s>; rel="last"`, p.with("_page", p.pages())))
		p.w.Header().Set("Link", strings.Join(links, ", "))
		return array(items)
	}},
	// json-server 1.0: the whole array unless asked for _page (from 1) or
	// _per_page; then {first, prev, next, last, pages, items, data}, the
	// neighbours as page numbers (null past either end), items the total.
	"json_server_v1": {Complete: true, Paging: map[string]string{"page_param": "_page", "page_size_param": "_per_page"}, serve: func(p *pageRequest) []byte {
		if q := p.r.URL.Query(); !q.Has("_page") && !q.Has("_per_page") {
			return array(p.all)
		}
		if n := p.number("_per_page"); n > 0 {
			p.size = n
		}
		i := p.pageNumber("_page", 1)
		items, more := p.window(i * p.size)
		var prev, next any
		if i > 0 {
			prev = i
		}
		if more {
			next = i + 2
		}
		return object(map[string]any{"first": 1, "prev": prev, "next": next, "last": p.pages(), "pages": p.pages(), "items": len(p.all)}, "data", array(items))
	}},
	// Page numbers from 1 with a total; a page past the last is answered
	// with the last, as services that clamp the page number do.
	"clamped": {Complete: true, Paging: map[string]string{"page_param": "page"}, serve: func(p *pageRequest) []byte {
		i := min(p.pageNumber("page", 1), p.pages()-1)
		items, _ := p.window(i * p.size)
		return object(map[string]any{"page": max(p.number("page"), 1), "total": len(p.all)}, "data", array(items))
	}},
	// Page numbers from 1 with a page count; past the last page, full pages
	// of new records made up on each request, as mock servers that
	// generate data do.
	"past_total": {Complete: true, Paging: map[string]string{"page_param": "page"}, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		if i >= p.pages() {
			items = madeUp(p.size)
		}
		return object(map[string]any{"page": i + 1, "per_page": p.size, "total_pages": p.pages()}, "data", array(items))
	}},
	// GoLogin: ?page from 1, a page size of the service's choosing, and the
	// total as allProfilesCount; nothing says how to ask for more.
	"gologin": {Paging: map[string]string{"page_param": "page"}, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		return object(map[string]any{"allProfilesCount": len(p.all), "currentOrbitaMajorV": "132"}, "profiles", array(items))
	}},
	// Multilogin X: offset and limit (the page size, required), the records
	// in data.profiles and the total in data.total_count, beside a status.
	"multilogin": {Paging: map[string]string{"offset_param": "offset", "page_size_param": "limit"}, serve: func(p *pageRequest) []byte {
		size, err := strconv.Atoi(p.r.URL.Query().Get("limit"))
		if err != nil || size < 1 {
			writeJSON(p.w, http.StatusBadRequest, map[string]any{"status": map[string]any{"error_code": "INVALID_LIMIT", "http_code": 400, "message": "limit is required"}})
			return nil
		}
		p.size = size
		items, _ := p.window(p.number("offset"))
		return object(map[string]any{"status": map[string]any{"error_code": "", "http_code": 200, "message": "Profiles found"}},
			"data", object(map[string]any{"total_count": len(p.all)}, "profiles", array(items)))
	}},

	// Next-page links that carry the token as a query value, as some APIs
	// put an access_token in their links.
	"token_link": {Complete: true, serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		if more {
			p.w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, p.link("/browsers?access_token="+url.QueryEscape(p.token())+"&page="+strconv.Itoa(i+2))))
		}
		return array(items)
	}},

	// The misbehaving modes.

	// A link carrying the token, back to the first page.
	"token_loop": {serve: func(p *pageRequest) []byte {
		items, _ := p.window(0)
		p.w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, p.link("/browsers?access_token="+url.QueryEscape(p.token())+"&page=1")))
		return array(items)
	}},

	// has_more, but every way to ask for more is ignored.
	"has_more": {serve: func(p *pageRequest) []byte {
		items, more := p.window(0)
		return p.s.listBody(items, len(p.all), map[string]any{"has_more": more})
	}},
	// A Link to another host.
	"offhost": {serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, more := p.window(i * p.size)
		if more {
			p.w.Header().Set("Link", fmt.Sprintf(`<http://elsewhere.invalid/api/v1/browsers?page=%d>; rel="next"`, i+2))
		}
		return array(items)
	}},
	// A Link back to the first page.
	"loop": {serve: func(p *pageRequest) []byte {
		items, _ := p.window(0)
		p.w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, p.with("page", 1)))
		return array(items)
	}},
	// A page token that is sent, and ignored.
	"ignore_cursor": {serve: func(p *pageRequest) []byte {
		items, more := p.window(0)
		return object(map[string]any{"nextPageToken": p.when(more, token(len(items)))}, "profiles", array(items))
	}},
	// A new next URL every time, the same page behind each.
	"new_url_loop": {serve: func(p *pageRequest) []byte {
		n := p.number("n")
		items, _ := p.window(0)
		return object(map[string]any{"next": p.with("n", n+1)}, "data", array(items))
	}},
	// A next link on every page, and past the total, full pages of new
	// records made up on each request.
	"past_total_link": {serve: func(p *pageRequest) []byte {
		i := p.pageNumber("page", 1)
		items, _ := p.window(i * p.size)
		if i >= p.pages() {
			items = madeUp(p.size)
		}
		return object(map[string]any{"total": len(p.all), "next": p.with("page", i+2)}, "data", array(items))
	}},
	// The whole list in one page, and a total larger than it.
	"total_lies": {serve: func(p *pageRequest) []byte {
		return object(map[string]any{"total": len(p.all) + 5}, "data", array(p.all))
	}},
	// Empty pages forever after the first.
	"empty_forever": {serve: func(p *pageRequest) []byte {
		n := p.number("n")
		var items []json.RawMessage
		if n == 0 {
			items, _ = p.window(0)
		}
		return object(map[string]any{"has_more": true, "next": p.with("n", n+1)}, "data", array(items))
	}},
	// A "next" that is an opaque value, with no word of where it goes.
	"opaque_next": {serve: func(p *pageRequest) []byte {
		items, more := p.window(0)
		return object(map[string]any{"next": p.when(more, token(len(items))), "has_more": more}, "data", array(items))
	}},
}
