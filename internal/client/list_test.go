package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// standinClient serves n generated profiles from the stand-in with opts.
func standinClient(t *testing.T, n int, opts standin.Options, tweak ...func(*Config)) (*Client, *standin.Server) {
	t.Helper()
	opts.Environments = []standin.Environment{{Name: "development", Token: testToken, Profiles: standin.Generate(n)}}
	s := standin.New(opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	longer := func(c *Config) { c.MaxRetries, c.MaxWait, c.Timeout = 5, 2*time.Second, 30*time.Second }
	return clientFor(t, srv.URL+"/development/api/v1", append([]func(*Config){longer}, tweak...)...), s
}

func wantKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("bp_gen_%07d", i)
	}
	return keys
}

func keysOf(ps []records.Profile) []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	return keys
}

// TestListProfiles_followsEveryPagingConvention reads 23 profiles in pages
// of 5 from every convention the stand-in serves, and from every mode the
// paging setting describes: all of them, once each, byte for byte, sorted,
// in as many requests as there are pages (one more where the service can
// only say it is done on an empty page).
func TestListProfiles_followsEveryPagingConvention(t *testing.T) {
	t.Parallel()
	extraRequests := map[string]int64{"short_page": 0, "empty_middle": 1}
	for name, mode := range standin.PagingModes {
		for _, described := range []bool{false, true} {
			if !described && !mode.Complete || described && mode.Paging == nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/described=%v", name, described), func(t *testing.T) {
				t.Parallel()
				var tweak []func(*Config)
				if described {
					tweak = append(tweak, func(c *Config) { c.Paging = pagingConfig(mode.Paging, 5) })
				}
				c, s := standinClient(t, 23, standin.Options{Paging: name, PageSize: 5}, tweak...)
				list, err := c.ListProfiles(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if list.Incomplete != nil || len(list.Warnings) != 0 {
					t.Fatalf("incomplete: %v; warnings %q", list.Incomplete, list.Warnings)
				}
				wantRecords(t, list.Profiles, 23)
				want := int64(5)
				switch {
				case !described && (name == "json_server" || name == "json_server_v1"):
					want = 1 // the whole array, unasked for pages
				case !described:
					want += extraRequests[name]
				}
				if s.Requests.Load() != want {
					t.Errorf("%d requests, want %d", s.Requests.Load(), want)
				}
			})
		}
	}
}

// pagingConfig is the stand-in's description of a mode as the client takes
// it, with page size n where the mode takes one.
func pagingConfig(attrs map[string]string, n int) *listing.Paging {
	pc := &listing.Paging{NextFrom: attrs["next_from"], NextParam: attrs["next_param"], PageParam: attrs["page_param"],
		FirstPage: 1, OffsetParam: attrs["offset_param"], PageSizeParam: attrs["page_size_param"], TotalFrom: attrs["total_from"]}
	if pc.PageSizeParam != "" {
		pc.PageSize = n
	}
	return pc
}

// wantRecords checks that ps are the n generated profiles, byte for byte.
func wantRecords(t *testing.T, ps []records.Profile, n int) {
	t.Helper()
	if !slices.Equal(keysOf(ps), wantKeys(n)) {
		t.Fatalf("keys %v", keysOf(ps))
	}
	for i, rec := range standin.Generate(n) {
		if string(ps[i].Raw) != string(rec) {
			t.Fatalf("record %d is %s, want %s", i, ps[i].Raw, rec)
		}
	}
}

// A full page that happens to be the last: the short-page convention needs
// one empty page to know it is done.
func TestListProfiles_shortPageConventionEndsOnAnEmptyPage(t *testing.T) {
	t.Parallel()
	c, s := standinClient(t, 20, standin.Options{Paging: "short_page", PageSize: 5})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete != nil {
		t.Fatalf("err %v, incomplete %v", err, list.Incomplete)
	}
	wantRecords(t, list.Profiles, 20)
	if s.Requests.Load() != 5 {
		t.Errorf("%d requests, want 4 pages and one empty one", s.Requests.Load())
	}
}

// Every way a service can make a list short is reported, never silent.
func TestListProfiles_reportsEveryWayAListCanBeShort(t *testing.T) {
	t.Parallel()
	want := map[string]struct{ claimed, reason string }{
		"has_more":      {"more profiles (has_more)", "brought no profile_key that earlier pages had not"},
		"offhost":       {"a further page", "not the base address's own scheme, host and port"},
		"loop":          {"a further page", "brought no profile_key that earlier pages had not"},
		"ignore_cursor": {"a further page", "ignored the page or cursor parameter"},
		"new_url_loop":  {"a further page", "brought no profile_key"},
		"total_lies":    {"17 profiles", "gave no way to reach more"},
		"empty_forever": {"more profiles (has_more)", "empty pages in a row"},
		"opaque_next":   {"more profiles (has_more)", `"next" field holds a value that is neither an address nor a known cursor`},
		"token_loop":    {"a further page", "brought no profile_key"},
		// Without the paging setting that describes them:
		"gologin":         {"12 profiles", "gave no way to reach more"},
		"multilogin":      {"", "limit is required"},
		"described":       {"", "limit is required"},
		"past_total_link": {"12 profiles", "page 4, past the end the service claimed, still brought 5 new profile(s)"},
	}
	for name, mode := range standin.PagingModes {
		if mode.Complete {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for mode %q", name)
			}
			c, s := standinClient(t, 12, standin.Options{Paging: name, PageSize: 5})
			list, err := c.ListProfiles(context.Background())
			if w.claimed == "" {
				// The service refuses a request it was not told how to make.
				var re *RequestError
				if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(re.Excerpt, w.reason) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			inc := list.Incomplete
			if inc == nil {
				t.Fatalf("%d profiles and no word of it being incomplete", len(list.Profiles))
			}
			if !strings.Contains(inc.Claimed, w.claimed) || !strings.Contains(inc.Reason, w.reason) {
				t.Errorf("claimed %q, reason %q", inc.Claimed, inc.Reason)
			}
			if inc.Have != len(list.Profiles) || inc.Have >= 12 && name != "total_lies" && name != "past_total_link" {
				t.Errorf("Have %d, %d profiles", inc.Have, len(list.Profiles))
			}
			if s.Requests.Load() > 10 {
				t.Errorf("%d requests before giving up", s.Requests.Load())
			}
			if strings.Contains(inc.URL, testToken) || strings.Contains(inc.Error(), testToken) {
				t.Errorf("the token is shown: %s", inc.URL)
			}
		})
	}
}

func TestListProfiles_totalLargerThanDelivered(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"profiles": [{"profile_key": "a"}], "totalCount": 3}`)
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete == nil || list.Incomplete.Claimed != "3 profiles" || list.Incomplete.Have != 1 {
		t.Errorf("list %+v, err %v", list, err)
	}
}

func TestListProfiles_pageLimit(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 30, standin.Options{Paging: "link", PageSize: 2}, func(c *Config) { c.MaxPages = 3 })
	list, err := c.ListProfiles(context.Background())
	if err != nil || len(list.Profiles) != 6 || list.Incomplete == nil || !strings.Contains(list.Incomplete.Reason, "limit of 3 pages") {
		t.Errorf("%d profiles, incomplete %v, err %v", len(list.Profiles), list.Incomplete, err)
	}
}

func TestListProfiles_survivesFaults(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]standin.Options{
		"intermittent 503 pages": {FailEvery: 2, Paging: "link", PageSize: 4},
		"dropped connections":    {ResetEvery: 2, Paging: "link", PageSize: 4},
		"slow answers":           {Delay: 30 * time.Millisecond, Paging: "link", PageSize: 4},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := standinClient(t, 10, opts)
			list, err := c.ListProfiles(context.Background())
			if err != nil || !slices.Equal(keysOf(list.Profiles), wantKeys(10)) {
				t.Errorf("keys %v, err %v", keysOf(list.Profiles), err)
			}
		})
	}
}

func TestListProfiles_truncatedJSONIsAnError(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 10, standin.Options{Truncate: true})
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrUnexpectedShape) || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("err = %v", err)
	}
}

// Two keys that differ only in invalid UTF-8 become one when the invalid
// bytes are replaced: the warning says so, rather than blaming pages.
func TestListProfiles_keysCollapsedByInvalidUTF8AreExplained(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("[{\"profile_key\":\"k\xff\",\"n\":1},{\"profile_key\":\"k\xfe\",\"n\":2}]"))
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || len(list.Profiles) != 1 || len(list.Warnings) != 1 {
		t.Fatalf("profiles %d, warnings %q, err %v", len(list.Profiles), list.Warnings, err)
	}
	if w := list.Warnings[0]; !strings.Contains(w, "twice with different records") || !strings.Contains(w, "invalid UTF-8") || strings.Contains(w, "overlapping") {
		t.Errorf("warning %q", w)
	}
}

// A page past the claimed end that repeats the last (a clamped page number)
// or is empty ends the list: everything claimed has arrived.
func TestListProfiles_aRepeatPastTheClaimedEndIsTheEnd(t *testing.T) {
	t.Parallel()
	for name, past := range map[string]string{"repeated": `[{"profile_key": "c"}]`, "empty": `[]`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Query().Get("page") {
				case "":
					io.WriteString(w, `{"total": 3, "next": "?page=2", "data": [{"profile_key": "a"}, {"profile_key": "b"}]}`)
				case "2":
					io.WriteString(w, `{"total": 3, "next": "?page=3", "data": [{"profile_key": "c"}]}`)
				default:
					fmt.Fprintf(w, `{"total": 3, "next": "?page=4", "data": %s}`, past)
				}
			})
			list, err := c.ListProfiles(context.Background())
			if err != nil || list.Incomplete != nil || len(list.Profiles) != 3 {
				t.Fatalf("%d profiles, err %v, incomplete %v", len(list.Profiles), err, list.Incomplete)
			}
		})
	}
}

// A cursor value that is not an address, with no parameter to send it in:
// the described setting cannot be followed, and says so.
func TestListProfiles_describedCursorWithoutParameter(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 12, standin.Options{Paging: "described", PageSize: 5}, func(c *Config) {
		c.Paging = &listing.Paging{NextFrom: "meta.cursor.next", PageSizeParam: "limit", PageSize: 5}
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete == nil || !strings.Contains(list.Incomplete.Reason, "next_param") {
		t.Errorf("incomplete %v, err %v", list.Incomplete, err)
	}
}

// A described paging gets every check a convention gets: a total, a page
// count or has_more that claims more than the setting found is the
// incomplete list, naming the setting that found nothing; never a short
// list in silence.
func TestListProfiles_describedPagingIsCheckedLikeAConvention(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mode          string
		paging        listing.Paging
		claimed, why  string
		have, request int
	}{
		"json-server 0.17, Link that only _page brings": {"json_server", listing.Paging{NextFrom: "header:Link", PageSizeParam: "_limit", PageSize: 5},
			"23 profiles", `paging.next_from ("header:Link") found nothing on page 1`, 5, 1},
		"json-server 1.0, a mistyped next_from": {"json_server_v1", listing.Paging{NextFrom: "links.next", PageSizeParam: "_per_page", PageSize: 5},
			"23 profiles", `paging.next_from ("links.next") found nothing on page 1`, 5, 1},
		"offsets with a total, described as a cursor": {"offset_limit", listing.Paging{NextFrom: "next_cursor", NextParam: "cursor"},
			"23 profiles", `paging.next_from ("next_cursor") found nothing`, 5, 1},
		"page numbers that stop short of the page count": {"page_number", listing.Paging{PageParam: "page", FirstPage: 1, PageSizeParam: "per_page", PageSize: 7},
			"5 pages, of which this was page 1", "page 1 held 5 profile(s), fewer than paging.page_size (7)", 5, 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, s := standinClient(t, 23, standin.Options{Paging: tc.mode, PageSize: 5}, func(c *Config) { c.Paging = &tc.paging })
			list, err := c.ListProfiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			inc := list.Incomplete
			if inc == nil {
				t.Fatalf("%d profiles and no word of it being incomplete", len(list.Profiles))
			}
			if inc.Claimed != tc.claimed || !strings.Contains(inc.Reason, tc.why) || inc.Have != tc.have || s.Requests.Load() != int64(tc.request) {
				t.Errorf("claimed %q, reason %q, have %d, %d requests", inc.Claimed, inc.Reason, inc.Have, s.Requests.Load())
			}
		})
	}
}

// header:Link follows the Link header's rel="next" target, not the whole
// header.
func TestListProfiles_describedLinkHeaderFollowsRelNext(t *testing.T) {
	t.Parallel()
	c, s := standinClient(t, 23, standin.Options{Paging: "link", PageSize: 5}, func(c *Config) {
		c.Paging = &listing.Paging{NextFrom: "header:Link", NextParam: "page"}
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete != nil {
		t.Fatalf("err %v, incomplete %v", err, list.Incomplete)
	}
	wantRecords(t, list.Profiles, 23)
	if s.Requests.Load() != 5 {
		t.Errorf("%d requests", s.Requests.Load())
	}
}

// total_from reads a total under a name no convention knows, and paging
// stops there: no page past it is asked for.
func TestListProfiles_totalFromEndsPaging(t *testing.T) {
	t.Parallel()
	var requests []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.RawQuery)
		page := r.URL.Query().Get("p")
		w.Header().Set("X-Profiles-All", "4")
		fmt.Fprintf(w, `{"rows": [{"profile_key": "a%s"}, {"profile_key": "b%s"}]}`, page, page)
	}, func(c *Config) {
		c.Paging = &listing.Paging{PageParam: "p", FirstPage: 0, TotalFrom: "header:X-Profiles-All"}
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete != nil || len(list.Profiles) != 4 {
		t.Fatalf("%d profiles, err %v, incomplete %v", len(list.Profiles), err, list.Incomplete)
	}
	if !slices.Equal(requests, []string{"p=0", "p=1"}) {
		t.Errorf("requests %q", requests)
	}
}
