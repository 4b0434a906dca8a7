package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Users feed profile_keys into for_each, so a list that comes back short
// destroys the resources of every missing profile on the next apply. The
// list is therefore read to the end in whatever convention the service pages
// (hints.go), and whenever the provider cannot be sure it has everything it
// says so: List.Incomplete, which the provider reports as an error unless
// the user accepts a partial list.

// List is the result of ListProfiles.
type List struct {
	Profiles   []Profile        // sorted by Key in byte order, keys unique
	Warnings   []string         // things the user should know that do not make the list short
	Incomplete *IncompleteError // non-nil when the list may be short
	Bytes      int64            // the size of the bodies the profiles were read from
}

// IncompleteError says why a list may be short. ListProfiles returns it in
// List.Incomplete rather than as its error: the provider decides whether a
// partial list is acceptable.
type IncompleteError struct {
	Have    int    // profiles read
	Pages   int    // pages read
	Claimed string // what the service claimed, in words ("42 profiles", "more (has_more)")
	Reason  string // why paging stopped, in words
	URL     string // the last page requested, query values elided
}

// ErrIncomplete is the kind of every *IncompleteError.
var ErrIncomplete = errors.New("the profile list is incomplete")

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%v: %d profiles over %d pages; the service claimed %s; %s", ErrIncomplete, e.Have, e.Pages, e.Claimed, e.Reason)
}

func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// PagingConfig describes a service whose paging fits no convention. With it
// set, the client follows exactly what it says and guesses nothing.
type PagingConfig struct {
	// NextFrom is where each response holds the next page's cursor or
	// address: a dot-separated path in the JSON body ("meta.next_cursor"),
	// or "header:<Name>".
	NextFrom string
	// NextParam is the request parameter that carries a cursor; a value that
	// is an address is requested as it is.
	NextParam string
	// PageSizeParam and PageSize, when set, are sent with every request
	// built by the client.
	PageSizeParam string
	PageSize      int
}

// maxEmptyPages is how many empty pages in a row are taken as "not the end
// yet" (filtered scans answer empty pages that still say there is more)
// before paging counts as stalled.
const maxEmptyPages = 5

// ListProfiles reads every profile the token can see, following pages.
func (c *Client) ListProfiles(ctx context.Context) (*List, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	ctx, done := c.withBodyBudget(ctx)
	defer done()
	p := &pager{c: c, requested: map[string]bool{}}
	incomplete, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	p.list.Incomplete, p.list.Bytes = incomplete, p.retained
	slices.SortFunc(p.list.Profiles, func(a, b Profile) int { return strings.Compare(a.Key, b.Key) })
	p.list.Warnings = append(p.list.Warnings, duplicateWarnings(p.dupes, p.conflicts)...)
	p.list.Warnings = append(p.list.Warnings, nfcWarnings(p.list.Profiles, p.index)...)
	return &p.list, nil
}

// nfcWarnings names the keys that are not in Unicode NFC. Terraform rewrites
// every string to NFC, so such a key reaches state in another spelling than
// the service's; and two keys that differ only in normalisation become one.
func nfcWarnings(profiles []Profile, index map[string]int) []string {
	var changed []string
	for _, p := range profiles {
		if !norm.NFC.IsNormalString(p.Key) {
			changed = append(changed, p.Key)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	// Only a key that changes can meet another: group the changed keys by
	// their NFC spelling, with the listed key already spelled so, if any.
	byNFC := map[string][]string{}
	for _, k := range changed {
		n := norm.NFC.String(k)
		if byNFC[n] == nil {
			if _, ok := index[n]; ok {
				byNFC[n] = []string{n}
			}
		}
		byNFC[n] = append(byNFC[n], k)
	}
	w := fmt.Sprintf("Terraform stores every string in Unicode NFC, and %d profile_key value(s) from the service are not: %s. "+
		"In state they take their NFC spelling (and so do their raw_json records); browserprofile_profile still reads each of them "+
		"by that spelling.", len(changed), quoteList(changed, 5, strconv.QuoteToASCII))
	var collide []string
	for _, keys := range byNFC {
		if len(keys) > 1 {
			collide = append(collide, keys...)
		}
	}
	if len(collide) > 0 {
		slices.Sort(collide)
		w += fmt.Sprintf(" Distinct keys become the same key that way: %s; a set of profile_keys (for_each) holds them once, "+
			"and a read by that key reaches only one of them. Ask the service's owners to send keys in NFC.", quoteList(collide, 6, strconv.QuoteToASCII))
	}
	return []string{w}
}

// ServiceSpelling returns the listed key whose NFC spelling is key, when
// the service spells it otherwise: Terraform hands the provider NFC strings,
// and the service knows its keys only as it spells them. "" when none.
func ServiceSpelling(profiles []Profile, key string) string {
	for _, p := range profiles {
		if p.Key != key && norm.NFC.String(p.Key) == key {
			return p.Key
		}
	}
	return ""
}

// pager is the state of one ListProfiles.
type pager struct {
	c         *Client
	list      List
	index     map[string]int  // profile_key -> index in list.Profiles
	requested map[string]bool // addresses already requested
	pages     int
	emptyRun  int
	pageBase  int   // what the service numbers its first page: 0 or 1
	retained  int64 // bytes of the bodies the kept records hold on to
	dupes     int
	conflicts []string // keys sent again with a different record
}

// run reads pages until the end, or until the list may be short, and then
// says why.
func (p *pager) run(ctx context.Context) (*IncompleteError, error) {
	u := p.c.firstListURL()
	for {
		p.requested[u.String()] = true
		p.pages++
		resp, getErr := p.c.get(ctx, u)
		if getErr != nil {
			return nil, getErr
		}
		page, decodeErr := decodeListPage(resp.body)
		if decodeErr != nil {
			return nil, p.c.shapeError(u, resp, decodeErr)
		}
		fresh, tooLarge := p.keep(page.profiles, resp.body)
		if tooLarge != nil {
			return nil, &RequestError{Kind: ErrBodyTooLarge, Method: http.MethodGet, URL: p.c.display(u), Cause: tooLarge}
		}

		var next *url.URL
		var claim string
		var stop *IncompleteError
		if p.c.cfg.Paging != nil {
			next, claim, stop = p.describedNext(resp)
		} else {
			next, claim, stop = p.conventionalNext(resp, page)
		}
		switch {
		case stop != nil:
		case p.pages > 1 && len(page.profiles) > 0 && fresh == 0:
			stop = p.incomplete(u, claim, fmt.Sprintf(
				"page %d brought no profile_key that earlier pages had not (the service ignored the page or cursor parameter, or repeated a page), so paging had stalled", p.pages))
		case len(page.profiles) == 0 && next != nil && p.emptyRun >= maxEmptyPages:
			stop = p.incomplete(u, claim, fmt.Sprintf("%d empty pages in a row still said there was more, so paging had stalled", p.emptyRun+1))
		case next == nil:
			return nil, nil
		case !sameOrigin(p.c.base, next):
			stop = p.incomplete(u, claim, fmt.Sprintf(
				"the next page is at %s, which is not the base address's own scheme, host and port, so it was not requested (the token is sent nowhere else)", redactedOrigin(next)))
		case p.requested[next.String()]:
			stop = p.incomplete(u, claim, "the next page's address had been requested already (a paging loop)")
		case p.pages >= p.c.cfg.MaxPages:
			stop = p.incomplete(u, claim, fmt.Sprintf("the provider's limit of %d pages was reached", p.c.cfg.MaxPages))
		}
		if stop != nil {
			return stop, nil
		}
		if len(page.profiles) == 0 {
			p.emptyRun++
		} else {
			p.emptyRun = 0
		}
		u = next
	}
}

// noClaim is what a page claims of what follows when it says nothing but
// where the next page is.
const noClaim = "a further page"

// conventionalNext finds the next page by the conventions of hints.go. It
// returns the next address (nil at the end), what the page claimed of what
// follows, and why the list may be short, if it may.
func (p *pager) conventionalNext(resp *response, page listPage) (*url.URL, string, *IncompleteError) {
	h := page.hints
	h.readHeaderHints(resp.header)
	if link := linkNext(resp.header); link != "" {
		h.nextURL = link // the Link header wins over the body
	}
	n, have := len(page.profiles), len(p.list.Profiles)
	if p.pages == 1 && h.page != nil {
		// Whether pages are counted from 0 or from 1 is read from the first
		// page's own number, not assumed.
		p.pageBase = min(*h.page, 1)
	}

	claim := ""
	switch {
	case h.total != nil && *h.total > have:
		claim = fmt.Sprintf("%d profiles", *h.total)
	case h.hasMore != nil && *h.hasMore:
		claim = "more profiles (has_more)"
	case h.page != nil && h.pages != nil && *h.page-p.pageBase+1 < *h.pages:
		claim = fmt.Sprintf("%d pages, of which this was page %d", *h.pages, *h.page-p.pageBase+1)
	case h.isLast != nil && !*h.isLast:
		claim = "more pages (this page is not the last)"
	}
	claimed := claim != ""
	if !claimed {
		claim = noClaim
	}
	if (h.hasMore != nil && !*h.hasMore) || (h.isLast != nil && *h.isLast) {
		if claimed {
			return nil, claim, p.incomplete(resp.url, claim, "the service marked this page as the last")
		}
		return nil, claim, nil
	}

	full := h.pageSize != nil && n > 0 && n >= *h.pageSize
	more := claimed || full
	switch {
	case h.nextURL != "":
		return resolve(resp.url, h.nextURL), claim, nil
	case h.cursor != "":
		return withParam(resp.url, h.cursorParam, h.cursor), claim, nil
	case h.nextPage != nil:
		return withParam(resp.url, "page", strconv.Itoa(*h.nextPage)), claim, nil
	case h.nextOffset != nil:
		return withParam(resp.url, "offset", strconv.Itoa(*h.nextOffset)), claim, nil
	case h.page != nil && more && !h.explicitEnd:
		return withParam(resp.url, "page", strconv.Itoa(*h.page+1)), claim, nil
	case h.offset != nil && more && !h.explicitEnd:
		return withParam(resp.url, h.offsetParam, strconv.Itoa(*h.offset+n)), claim, nil
	case h.nextUnknown != "":
		return nil, claim, p.incomplete(resp.url, claim, fmt.Sprintf(
			"the response's %q field holds a value that is neither an address nor a known cursor, and the provider does not know which request parameter it belongs in; describe the service's paging with the provider's paging setting", h.nextUnknown))
	case h.hasMore != nil && *h.hasMore && n > 0:
		// Stripe's convention: has_more with no link, continued after the
		// last record of the page.
		return withParam(resp.url, "starting_after", page.profiles[n-1].Key), claim, nil
	case claimed:
		return nil, claim, p.incomplete(resp.url, claim, "the response gave no way to reach more that the provider understands")
	case full && !h.explicitEnd:
		return nil, claim, p.incomplete(resp.url, fmt.Sprintf("a full page of %d", *h.pageSize),
			"the response gave no way to reach the next page that the provider understands; describe the service's paging with the provider's paging setting")
	}
	return nil, claim, nil
}

// describedNext follows the provider's paging setting and nothing else.
func (p *pager) describedNext(resp *response) (*url.URL, string, *IncompleteError) {
	cfg := p.c.cfg.Paging
	v := describedValue(cfg.NextFrom, resp)
	switch {
	case v == "":
		return nil, noClaim, nil
	case isLink(v):
		return resolve(resp.url, v), noClaim, nil
	case cfg.NextParam == "":
		claim := "more pages (" + cfg.NextFrom + " is set)"
		return nil, claim, p.incomplete(resp.url, claim,
			"its value is not an address, and paging.next_param does not name the request parameter to send it in")
	}
	return withParam(resp.url, cfg.NextParam, v), noClaim, nil
}

// describedValue reads the value at a paging.next_from location: a header,
// or a dot-separated path of object fields in the body. A missing value,
// null, false or "" means there is no next page.
func describedValue(from string, resp *response) string {
	if name, ok := strings.CutPrefix(from, "header:"); ok {
		return strings.TrimSpace(resp.header.Get(name))
	}
	value := resp.body
	for _, name := range strings.Split(from, ".") {
		v, ok := field(value, name)
		if !ok {
			return ""
		}
		value = v
	}
	s, isString := scalarString(value)
	if !isString && (s == "null" || s == "false" || firstByte(value) == '{' || firstByte(value) == '[') {
		return ""
	}
	return s
}

func (p *pager) incomplete(u *url.URL, claimed, reason string) *IncompleteError {
	return &IncompleteError{Have: len(p.list.Profiles), Pages: p.pages, Claimed: claimed, Reason: reason, URL: p.c.display(u)}
}

// keep adds the page's profiles not seen before and returns how many there
// were. When a page repeats records, the new ones (and the keys of records
// sent again differently) are copied out of its body,
// so that a service repeating a large page cannot make the client hold every
// copy; the bytes held stay within the body limit.
func (p *pager) keep(ps []Profile, body []byte) (fresh int, err error) {
	if p.index == nil {
		// Sized by the first page, which is often the whole list.
		p.index = make(map[string]int, len(ps))
		p.list.Profiles = make([]Profile, 0, len(ps))
	}
	repeats := false
	for _, q := range ps {
		if _, ok := p.index[q.Key]; ok {
			repeats = true
			break
		}
	}
	for _, q := range ps {
		if i, ok := p.index[q.Key]; ok {
			p.dupes++
			if !bytes.Equal(p.list.Profiles[i].Raw, q.Raw) {
				p.conflicts = append(p.conflicts, strings.Clone(q.Key))
			}
			continue
		}
		if repeats {
			// The key too: it may share the body's bytes (unquoteShared).
			q.Key, q.Raw = strings.Clone(q.Key), bytes.Clone(q.Raw)
			p.retained += int64(len(q.Raw))
		}
		p.index[q.Key] = len(p.list.Profiles)
		p.list.Profiles = append(p.list.Profiles, q)
		fresh++
	}
	if !repeats && fresh > 0 {
		p.retained += int64(len(body))
	}
	if p.retained > p.c.cfg.MaxBodyBytes {
		return fresh, fmt.Errorf("the list's pages together hold more than %d bytes", p.c.cfg.MaxBodyBytes)
	}
	return fresh, nil
}

// duplicateWarnings explains keys the service sent more than once.
func duplicateWarnings(dupes int, conflicts []string) []string {
	var out []string
	if n := dupes - len(conflicts); n > 0 {
		out = append(out, fmt.Sprintf("The service sent %d record(s) again that it had already sent, unchanged (pages overlapping while the list changed?); each is kept once.", n))
	}
	if len(conflicts) > 0 {
		out = append(out, fmt.Sprintf("The service sent %d profile_key value(s) twice with different records; the first record of each is kept: %s.%s",
			len(conflicts), quoteList(conflicts, 5, strconv.Quote), invalidUTF8Note(conflicts)))
	}
	return out
}

// invalidUTF8Note explains keys that only became equal when the invalid
// UTF-8 in them was replaced: Terraform strings must be UTF-8.
func invalidUTF8Note(keys []string) string {
	for _, k := range keys {
		if strings.ContainsRune(k, '\uFFFD') {
			return " Keys holding U+FFFD were sent with invalid UTF-8, which Terraform cannot store; the invalid bytes were replaced, and distinct keys can become equal that way: ask the service's owners to send UTF-8."
		}
	}
	return ""
}

// quoteList quotes up to limit strings, then says how many more. Keys that
// differ only in normalisation look alike, so their warnings quote with
// escapes (strconv.QuoteToASCII).
func quoteList(ss []string, limit int, quote func(string) string) string {
	q := make([]string, 0, limit)
	for _, s := range ss[:min(len(ss), limit)] {
		q = append(q, quote(s))
	}
	if len(ss) > limit {
		q = append(q, fmt.Sprintf("and %d more", len(ss)-limit))
	}
	return strings.Join(q, ", ")
}

// firstListURL is GET /browsers, with the page size of the paging setting.
func (c *Client) firstListURL() *url.URL {
	u := listURL(c.base)
	if pc := c.cfg.Paging; pc != nil && pc.PageSizeParam != "" {
		u = withParam(u, pc.PageSizeParam, strconv.Itoa(pc.PageSize))
	}
	return u
}

func resolve(base *url.URL, ref string) *url.URL {
	r, err := url.Parse(ref)
	if err != nil {
		// An unparsable link cannot be followed; treat it as off-host.
		return &url.URL{Scheme: "invalid", Host: "invalid"}
	}
	return base.ResolveReference(r)
}

// withParam returns u with the query parameter name set to value.
func withParam(u *url.URL, name, value string) *url.URL {
	next := *u
	q := next.Query()
	q.Set(name, value)
	next.RawQuery = q.Encode()
	return &next
}
