package listing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/redact"
)

// A page that repeats records is not held: what is kept of it, keys
// included (they may share a body's bytes), is copied out of its body.
func TestPager_keepsNothingOfARepeatingPagesBody(t *testing.T) {
	t.Parallel()
	p := &pager{opts: Options{MaxBytes: 1 << 20}}
	decode := func(body []byte) []records.Profile {
		page, err := decodeListPage(body)
		if err != nil {
			t.Fatal(err)
		}
		return page.profiles
	}
	first := []byte(`[{"profile_key":"a"},{"profile_key":"b","v":1}]`)
	if _, err := p.keep(decode(first), first); err != nil {
		t.Fatal(err)
	}
	again := []byte(`[{"profile_key":"b","v":2},{"profile_key":"c"}]`)
	if _, err := p.keep(decode(again), again); err != nil {
		t.Fatal(err)
	}
	inside := func(b *byte) bool {
		at := uintptr(unsafe.Pointer(b))
		return at >= uintptr(unsafe.Pointer(&again[0])) && at <= uintptr(unsafe.Pointer(&again[len(again)-1]))
	}
	kept := p.list.Profiles[len(p.list.Profiles)-1]
	if kept.Key != "c" || inside(unsafe.StringData(kept.Key)) || inside(&kept.Raw[0]) ||
		len(p.conflicts) != 1 || inside(unsafe.StringData(p.conflicts[0])) {
		t.Errorf("kept %q %s, conflicts %q: something still points into the repeating page's body", kept.Key, kept.Raw, p.conflicts)
	}
}

// service is a Source that answers from a map of address to body, as a
// service on https://api.example.com would, and records what was fetched.
type service struct {
	pages   map[string]string // "/api/v1/browsers?page=2" -> body
	header  map[string]http.Header
	fetched []string
}

const listAddress = "https://api.example.com/api/v1/browsers"

func (s *service) Fetch(_ context.Context, u *url.URL) (*Page, error) {
	s.fetched = append(s.fetched, u.RequestURI())
	body, ok := s.pages[u.RequestURI()]
	if !ok {
		return nil, fmt.Errorf("no page at %s", u.RequestURI())
	}
	return &Page{URL: u, Status: 200, Header: s.header[u.RequestURI()], Body: []byte(body), Requests: 1}, nil
}

func (s *service) OnOrigin(u *url.URL) bool {
	return u.Scheme == "https" && u.Host == "api.example.com"
}

// read reads the service's list with the defaults the client gives.
func read(t *testing.T, s *service, opts Options) *List {
	t.Helper()
	opts.List, _ = url.Parse(listAddress)
	if opts.MaxPages == 0 {
		opts.MaxPages = 100
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = 1 << 20
	}
	opts.Redactor = redact.New("tok-abcdef123456")
	list, err := Read(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// array is a JSON array of records with these keys.
func array(keys ...string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"profile_key":%q}`, k)
	}
	b.WriteByte(']')
	return b.String()
}

// wantIncomplete fails unless list is incomplete for a reason holding
// reason, with the claim given.
func wantIncomplete(t *testing.T, list *List, claimed, reason string) {
	t.Helper()
	if list.Incomplete == nil {
		t.Fatalf("the list of %d profiles is complete; want it incomplete: %s", len(list.Profiles), reason)
	}
	if list.Incomplete.Claimed != claimed || !strings.Contains(list.Incomplete.Reason, reason) {
		t.Errorf("incomplete: claimed %q, %q; want claimed %q, a reason holding %q", list.Incomplete.Claimed, list.Incomplete.Reason, claimed, reason)
	}
}

// The rules of the completeness check, one test each, in the order run
// applies them.

func TestRead_pastTheClaimedEndNewProfilesFail(t *testing.T) {
	s := &service{pages: map[string]string{
		"/api/v1/browsers":        `{"data":` + array("a", "b") + `,"total":2,"next":"/api/v1/browsers?page=2"}`,
		"/api/v1/browsers?page=2": `{"data":` + array("c") + `,"total":2}`,
	}}
	wantIncomplete(t, read(t, s, Options{}), "2 profiles", "page 2, past the end the service claimed, still brought 1 new profile(s)")
}

func TestRead_pastTheClaimedEndNothingNewIsTheEnd(t *testing.T) {
	for name, second := range map[string]string{"empty": array(), "a repeat": array("b")} {
		s := &service{pages: map[string]string{
			"/api/v1/browsers":        `{"data":` + array("a", "b") + `,"total":2,"next":"/api/v1/browsers?page=2"}`,
			"/api/v1/browsers?page=2": `{"data":` + second + `}`,
		}}
		if list := read(t, s, Options{}); list.Incomplete != nil || len(list.Profiles) != 2 || len(s.fetched) != 2 {
			t.Errorf("%s page past the end: %d profiles from %d pages, incomplete %v; want the list of 2, complete", name, len(list.Profiles), len(s.fetched), list.Incomplete)
		}
	}
}

func TestRead_markedLastWhileClaimingMoreFails(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"data":` + array("a") + `,"total":3,"has_more":false}`}}
	wantIncomplete(t, read(t, s, Options{}), "3 profiles", "the service marked this page as the last")
}

func TestRead_aPageWithNothingNewHasStalled(t *testing.T) {
	s := &service{pages: map[string]string{
		"/api/v1/browsers":        `{"data":` + array("a", "b") + `,"next":"/api/v1/browsers?page=2"}`,
		"/api/v1/browsers?page=2": `{"data":` + array("a", "b") + `,"next":"/api/v1/browsers?page=3"}`,
	}}
	wantIncomplete(t, read(t, s, Options{}), "a further page", "page 2 brought no profile_key that earlier pages had not")
}

func TestRead_aClaimOfMoreWithNoWayOnFails(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"data":` + array("a", "b") + `,"totalCount":5}`}}
	wantIncomplete(t, read(t, s, Options{}), "5 profiles", "the response gave no way to reach more that the provider understands")
}

func TestRead_aFullPageWithNoWayOnFails(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"data":` + array("a", "b") + `,"limit":2}`}}
	wantIncomplete(t, read(t, s, Options{}), "a full page of 2", "the response gave no way to reach the next page")
}

func TestRead_noClaimAndNoNextPageIsTheEnd(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": array("b", "a")}}
	if list := read(t, s, Options{}); list.Incomplete != nil || len(list.Profiles) != 2 || list.Profiles[0].Key != "a" {
		t.Errorf("list %+v; want a and b, complete", list)
	}
}

func TestRead_atTheClaimedEndNoPageIsCountedOn(t *testing.T) {
	s := &service{pages: map[string]string{
		"/api/v1/browsers":        `{"data":` + array("a", "b") + `,"page":1,"total":3}`,
		"/api/v1/browsers?page=2": `{"data":` + array("c") + `,"page":2,"total":3}`,
	}}
	if list := read(t, s, Options{}); list.Incomplete != nil || len(list.Profiles) != 3 || len(s.fetched) != 2 {
		t.Errorf("%d profiles from %v, incomplete %v; want 3 from two pages and no third asked for", len(list.Profiles), s.fetched, list.Incomplete)
	}
}

func TestRead_emptyPagesInARowThatStillClaimMoreHaveStalled(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"data":` + array("a") + `,"has_more":true,"next_cursor":"c1"}`}}
	for i := 1; i <= maxEmptyPages+1; i++ {
		s.pages[fmt.Sprintf("/api/v1/browsers?cursor=c%d", i)] = fmt.Sprintf(`{"data":[],"has_more":true,"next_cursor":"c%d"}`, i+1)
	}
	wantIncomplete(t, read(t, s, Options{}), "more profiles (has_more)", fmt.Sprintf("%d empty pages in a row still said there was more", maxEmptyPages+1))
}

func TestRead_aNextPageOffTheOriginIsNotRequested(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"data":` + array("a") + `,"next":"https://evil.example/api/v1/browsers?page=2&token=x"}`}}
	list := read(t, s, Options{})
	wantIncomplete(t, list, "a further page", "the next page is at https://evil.example/…, which is not the base address's own scheme, host and port")
	if len(s.fetched) != 1 {
		t.Errorf("fetched %v; want the first page alone", s.fetched)
	}
}

func TestRead_aNextAddressAlreadyRequestedIsALoop(t *testing.T) {
	s := &service{pages: map[string]string{
		"/api/v1/browsers":        `{"data":` + array("a") + `,"next":"/api/v1/browsers?page=2"}`,
		"/api/v1/browsers?page=2": `{"data":` + array("b") + `,"next":"/api/v1/browsers"}`,
	}}
	wantIncomplete(t, read(t, s, Options{}), "a further page", "the next page's address had been requested already (a paging loop)")
}

func TestRead_thePageLimitEndsAListThatGoesOn(t *testing.T) {
	s := &service{pages: map[string]string{}}
	for i := 1; i <= 3; i++ {
		addr := "/api/v1/browsers"
		if i > 1 {
			addr += fmt.Sprintf("?page=%d", i)
		}
		s.pages[addr] = fmt.Sprintf(`{"data":%s,"next":"/api/v1/browsers?page=%d"}`, array(fmt.Sprint(i)), i+1)
	}
	list := read(t, s, Options{MaxPages: 3})
	wantIncomplete(t, list, "a further page", "the provider's limit of 3 pages was reached")
	if len(list.Profiles) != 3 {
		t.Errorf("%d profiles; want the 3 read", len(list.Profiles))
	}
}

func TestRead_pagesOverTheByteLimitFail(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": array("a", "b", "c")}}
	opts := Options{MaxPages: 10, MaxBytes: 10, Redactor: redact.New("tok-abcdef123456")}
	opts.List, _ = url.Parse(listAddress)
	_, err := Read(context.Background(), s, opts)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.URL != listAddress || tooLarge.Limit != 10 {
		t.Errorf("err = %v; want a *TooLargeError naming the page", err)
	}
}

func TestRead_aBodyThatIsNoListFails(t *testing.T) {
	s := &service{pages: map[string]string{"/api/v1/browsers": `{"message":"hello"}`}}
	opts := Options{MaxPages: 10, MaxBytes: 1 << 20, Redactor: redact.New("tok-abcdef123456")}
	opts.List, _ = url.Parse(listAddress)
	_, err := Read(context.Background(), s, opts)
	var shape *ShapeError
	if !errors.As(err, &shape) || shape.URL.String() != listAddress || string(shape.Page.Body) != `{"message":"hello"}` {
		t.Errorf("err = %v; want a *ShapeError holding the page", err)
	}
}

// A Link header wins over a next address in the body.
func TestRead_theLinkHeaderWinsOverTheBody(t *testing.T) {
	s := &service{
		pages: map[string]string{
			"/api/v1/browsers":         `{"data":` + array("a") + `,"next":"/api/v1/browsers?body=2"}`,
			"/api/v1/browsers?after=a": `{"data":` + array("b") + `}`,
		},
		header: map[string]http.Header{"/api/v1/browsers": {"Link": {`</api/v1/browsers?after=a>; rel="next"`}}},
	}
	if list := read(t, s, Options{}); list.Incomplete != nil || len(list.Profiles) != 2 {
		t.Errorf("%d profiles from %v, incomplete %v", len(list.Profiles), s.fetched, list.Incomplete)
	}
}

// The paging the user describes gets the same checks: a total it reaches
// ends counting, a claim of more it cannot follow fails.
func TestRead_describedPagingIsCheckedAlike(t *testing.T) {
	s := &service{pages: map[string]string{
		"/api/v1/browsers?n=1": `{"items":` + array("a", "b") + `,"meta":{"all":3}}`,
		"/api/v1/browsers?n=2": `{"items":` + array("c") + `,"meta":{"all":3}}`,
	}}
	list := read(t, s, Options{Paging: &Paging{PageParam: "n", FirstPage: 1, TotalFrom: "meta.all"}})
	if list.Incomplete != nil || len(list.Profiles) != 3 || len(s.fetched) != 2 {
		t.Errorf("%d profiles from %v, incomplete %v; want 3 from two pages", len(list.Profiles), s.fetched, list.Incomplete)
	}
	s = &service{pages: map[string]string{"/api/v1/browsers": `{"items":` + array("a") + `,"meta":{"all":3}}`}}
	wantIncomplete(t, read(t, s, Options{Paging: &Paging{NextFrom: "meta.next", TotalFrom: "meta.all"}}), "3 profiles", `paging.next_from ("meta.next") found nothing on page 1`)
}
