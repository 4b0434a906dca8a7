package listing

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// Users feed profile_keys into for_each, so a list that comes back short
// destroys the resources of every missing profile on the next apply. The
// list is therefore read to the end in whatever convention the service pages
// (hints.go), and whenever the reader cannot be sure it has everything it
// says so: List.Incomplete, which the provider reports as an error unless
// the user accepts a partial list.

// List is the result of Read.
type List struct {
	Profiles   []records.Profile // sorted by Key in byte order, keys unique
	Warnings   []string          // things the user should know that do not make the list short
	Incomplete *IncompleteError  // non-nil when the list may be short
}

// IncompleteError says why a list may be short. Read returns it in
// List.Incomplete rather than as its error: the provider decides whether a
// partial list is acceptable.
type IncompleteError struct {
	Have    int    // profiles read
	Pages   int    // pages read
	Claimed string // what the service claimed, in words ("42 profiles", "more (has_more)")
	Reason  string // why paging stopped, in words
	URL     string // the last page requested
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("the profile list is incomplete: %d profiles over %d pages; the service claimed %s; %s", e.Have, e.Pages, e.Claimed, e.Reason)
}

// maxEmptyPages is how many empty pages in a row are taken as "not the end
// yet" (filtered scans answer empty pages that still say there is more)
// before paging counts as stalled.
const maxEmptyPages = 5

// Read reads every profile the source can reach, following pages from
// opts.List, within ctx's deadline. A page the source cannot fetch ends the
// read with the source's error; one that cannot be decoded, with a
// *ShapeError; pages that together hold more than opts.MaxBytes, with a
// *TooLargeError.
func Read(ctx context.Context, src Source, opts Options) (*List, error) {
	p := &pager{src: src, opts: opts, requested: map[string]bool{}}
	incomplete, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	p.list.Incomplete = incomplete
	slices.SortFunc(p.list.Profiles, func(a, b records.Profile) int { return strings.Compare(a.Key, b.Key) })
	p.list.Warnings = append(p.list.Warnings, duplicateWarnings(p.dupes, p.conflicts, opts.Redactor)...)
	p.list.Warnings = append(p.list.Warnings, nfcWarnings(p.list.Profiles, p.index, opts.Redactor)...)
	return &p.list, nil
}

// pager is the state of one Read.
type pager struct {
	src       Source
	opts      Options
	list      List
	index     map[string]int  // profile_key -> index in list.Profiles
	requested map[string]bool // addresses already requested
	pages     int
	requests  int // requests sent, retries included
	received  int // records received, repeats included: the next offset
	emptyRun  int
	pageBase  int   // what the service numbers its first page: 0 or 1
	retained  int64 // bytes of the bodies the kept records hold on to
	dupes     int
	conflicts []string // keys sent again with a different record
	pastEnd   bool     // the page being read was requested past the end the service claimed
}

// Every page is checked against what the service claims of the whole list,
// whatever finds the next page (a convention, or the user's paging setting):
//
//   - a claim of more (a total larger than what arrived, has_more, a page
//     count not reached, a page not marked last) with no next page found is
//     an incomplete list;
//   - once the claimed end is reached (the total, the last page), no page
//     is counted on (page numbers, offsets): paging ends there;
//   - a next address the service itself gives past its claimed end is
//     followed once, to see that it holds nothing new: a page past the end
//     that is empty or repeats ends the list, one that brings new profiles
//     is a service contradicting its own total, which fails loudly;
//   - a page that brings nothing new before the claimed end has stalled.

// nextPage is what a finder found on one page.
type nextPage struct {
	url *url.URL // nil: none found
	// counted is set when the client made the address up (a page number or
	// offset counted on), rather than the service giving it.
	counted bool
	// why, when url is nil, says why no next page was found, for when the
	// page claims more. claim is set when more is likely whatever the page
	// claims (a full page and no way on), and says what that amounts to.
	why, claim string
}

// run reads pages until the end, or until the list may be short, and then
// says why.
func (p *pager) run(ctx context.Context) (*IncompleteError, error) {
	finder := p.conventionalNext
	if p.opts.Paging != nil {
		finder = p.describedNext
	}
	u := firstURL(p.opts.List, p.opts.Paging)
	for {
		p.requested[u.String()] = true
		p.pages++
		resp, getErr := p.src.Fetch(ctx, u)
		if getErr != nil {
			return nil, getErr
		}
		p.requests += resp.Requests
		page, decodeErr := decodeListPage(resp.Body)
		if decodeErr != nil {
			return nil, &ShapeError{URL: u, Page: resp, Err: decodeErr}
		}
		fresh, tooLarge := p.keep(page.profiles, resp.Body)
		if tooLarge != nil {
			return nil, &TooLargeError{URL: p.opts.Redactor.RedactURL(u), Limit: p.opts.MaxBytes}
		}
		p.received += len(page.profiles)

		h := page.hints
		h.readHeaderHints(resp.Header)
		if p.opts.Paging != nil {
			p.opts.Paging.readTotal(&h, resp)
		}
		cl := p.claims(h, p.pageIndex(h))
		next := finder(resp, page, h, cl)

		// The rules, in order; each has a test named for it (TestRead_*).
		if p.pastEnd { // past the claimed end: nothing new is the end, new profiles fail
			if fresh == 0 {
				return nil, nil // empty, or a repeat: the end the service claimed
			}
			return p.incomplete(u, cl.orTotal(h), fmt.Sprintf(
				"page %d, past the end the service claimed, still brought %d new profile(s): the service answers past its own total, "+
					"so the provider cannot tell where the list ends (%d requests made)", p.pages, fresh, p.requests)), nil
		}
		switch {
		case cl.lastButMore: // marked last while claiming more
			return p.incomplete(u, cl.text, "the service marked this page as the last"), nil
		case p.pages > 1 && len(page.profiles) > 0 && fresh == 0: // a page with nothing new has stalled
			if cl.end {
				return nil, nil // a page past the claimed end repeats: the end
			}
			return p.incomplete(u, cl.orFurther(), fmt.Sprintf(
				"page %d brought no profile_key that earlier pages had not (the service ignored the page or cursor parameter, or repeated a page), so paging had stalled", p.pages)), nil
		case next.url == nil && (cl.text != "" || next.claim != ""): // a claim of more (or a full page) with no way on
			claim, why := cl.text, next.why
			if claim == "" {
				claim = next.claim
			}
			if why == "" {
				why = "the response gave no way to reach more that the provider understands"
			}
			return p.incomplete(u, claim, why), nil
		case next.url == nil, cl.end && next.counted: // the end; at the claimed end no page is counted on
			return nil, nil
		case len(page.profiles) == 0 && p.emptyRun >= maxEmptyPages: // empty pages in a row have stalled
			return p.incomplete(u, cl.orFurther(), fmt.Sprintf("%d empty pages in a row still said there was more, so paging had stalled", p.emptyRun+1)), nil
		case !p.src.OnOrigin(next.url): // a next page off the origin is not requested
			return p.incomplete(u, cl.orFurther(), fmt.Sprintf(
				"the next page is at %s, which is not the base address's own scheme, host and port, so it was not requested (the token is sent nowhere else)", p.opts.Redactor.Redact(redact.Origin(next.url)))), nil
		case p.requested[next.url.String()]: // an address already requested is a loop
			return p.incomplete(u, cl.orFurther(), "the next page's address had been requested already (a paging loop)"), nil
		case p.pages >= p.opts.MaxPages: // the page limit
			return p.incomplete(u, cl.orFurther(), fmt.Sprintf("the provider's limit of %d pages was reached", p.opts.MaxPages)), nil
		}
		if len(page.profiles) == 0 {
			p.emptyRun++
		} else {
			p.emptyRun = 0
		}
		p.pastEnd = cl.end
		u = next.url
	}
}

// claims is what one page says of the whole list.
type claims struct {
	text        string // the more the page claimed, in words; "" when none
	end         bool   // the page is at the end the service claimed: its total, its last page
	lastButMore bool   // marked last, while a total or page count claims more
}

// orFurther is the claim, or that there was a further page.
func (c claims) orFurther() string {
	if c.text == "" {
		return "a further page"
	}
	return c.text
}

// orTotal is the claim, or the total the page named.
func (c claims) orTotal(h hints) string {
	if c.text == "" && h.total != nil {
		return fmt.Sprintf("%d profiles", *h.total)
	}
	return c.orFurther()
}

// claims reads a page's totals, counts and flags. index is the page's
// position, counted from 1, when known.
func (p *pager) claims(h hints, index *int) claims {
	have := len(p.list.Profiles)
	var c claims
	switch {
	case h.total != nil && *h.total > have:
		c.text = fmt.Sprintf("%d profiles", *h.total)
	case h.hasMore != nil && *h.hasMore:
		c.text = "more profiles (has_more)"
	case index != nil && h.pages != nil && *index < *h.pages:
		c.text = fmt.Sprintf("%d pages, of which this was page %d", *h.pages, *index)
	case h.isLast != nil && !*h.isLast:
		c.text = "more pages (this page is not the last)"
	}
	markedLast := h.hasMore != nil && !*h.hasMore || h.isLast != nil && *h.isLast
	c.lastButMore = markedLast && c.text != ""
	c.end = c.text == "" && (h.total != nil || index != nil && h.pages != nil || markedLast)
	return c
}

// pageIndex is the page's position counted from 1, when the service numbers
// its pages or the paging setting counts them; whether a service counts
// from 0 or from 1 is read from its first page's own number.
func (p *pager) pageIndex(h hints) *int {
	if pc := p.opts.Paging; pc != nil && pc.PageParam != "" {
		return &p.pages
	}
	if h.page == nil {
		return nil
	}
	if p.pages == 1 {
		p.pageBase = min(*h.page, 1)
	}
	i := *h.page - p.pageBase + 1
	return &i
}

// conventionalNext finds the next page by the conventions of hints.go.
func (p *pager) conventionalNext(resp *Page, page listPage, h hints, cl claims) nextPage {
	if link := linkNext(resp.Header); link != "" {
		h.nextURL = link // the Link header wins over the body
	}
	n := len(page.profiles)
	if h.hasMore != nil && !*h.hasMore || h.isLast != nil && *h.isLast {
		return nextPage{}
	}
	// A full page is a sign of more only short of a claimed end.
	full := h.pageSize != nil && n > 0 && n >= *h.pageSize && !cl.end
	more := cl.text != "" || full
	counted := func(u *url.URL) nextPage { return nextPage{url: u, counted: true} }
	switch {
	case h.nextURL != "":
		return nextPage{url: resolve(resp.URL, h.nextURL)}
	case h.cursor != "":
		return nextPage{url: withParam(resp.URL, h.cursorParam, h.cursor)}
	case h.nextPage != nil:
		return nextPage{url: withParam(resp.URL, "page", strconv.Itoa(*h.nextPage))}
	case h.nextOffset != nil:
		return nextPage{url: withParam(resp.URL, "offset", strconv.Itoa(*h.nextOffset))}
	case h.page != nil && more && !h.explicitEnd:
		return counted(withParam(resp.URL, "page", strconv.Itoa(*h.page+1)))
	case h.offset != nil && more && !h.explicitEnd:
		return counted(withParam(resp.URL, h.offsetParam, strconv.Itoa(*h.offset+n)))
	case h.nextUnknown != "":
		return nextPage{why: fmt.Sprintf(
			"the response's %q field holds a value that is neither an address nor a known cursor, and the provider does not know which request parameter it belongs in; describe the service's paging with the provider's paging setting", p.opts.Redactor.Quote(h.nextUnknown)),
			claim: "a further page"}
	case h.hasMore != nil && *h.hasMore && n > 0:
		// Stripe's convention: has_more with no link, continued after the
		// last record of the page.
		return counted(withParam(resp.URL, "starting_after", page.profiles[n-1].Key))
	case full && !h.explicitEnd && cl.text == "":
		return nextPage{claim: fmt.Sprintf("a full page of %d", *h.pageSize),
			why: "the response gave no way to reach the next page that the provider understands; describe the service's paging with the provider's paging setting"}
	}
	return nextPage{}
}

func (p *pager) incomplete(u *url.URL, claimed, reason string) *IncompleteError {
	return &IncompleteError{Have: len(p.list.Profiles), Pages: p.pages, Claimed: claimed, Reason: reason, URL: p.opts.Redactor.RedactURL(u)}
}

// keep adds the page's profiles not seen before and returns how many there
// were. When a page repeats records, the new ones (and the keys of records
// sent again differently) are copied out of its body,
// so that a service repeating a large page cannot make the client hold every
// copy; the bytes held stay within the body limit.
func (p *pager) keep(ps []records.Profile, body []byte) (fresh int, err error) {
	if p.index == nil {
		// Sized by the first page, which is often the whole list, and
		// kept as it was decoded when it repeats no key of its own.
		p.index = make(map[string]int, len(ps))
		for i, q := range ps {
			if _, ok := p.index[q.Key]; ok {
				clear(p.index)
				break
			}
			p.index[q.Key] = i
		}
		if len(p.index) == len(ps) {
			p.list.Profiles = ps
			return p.kept(len(ps), false, body)
		}
		p.list.Profiles = make([]records.Profile, 0, len(ps))
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
	return p.kept(fresh, repeats, body)
}

// kept counts what a page's fresh records hold on to: the page's body, or,
// for a page that repeats records, the copies of the fresh ones.
func (p *pager) kept(fresh int, repeats bool, body []byte) (int, error) {
	if !repeats && fresh > 0 {
		p.retained += int64(len(body))
	}
	if p.retained > p.opts.MaxBytes {
		return fresh, errTooLarge
	}
	return fresh, nil
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
