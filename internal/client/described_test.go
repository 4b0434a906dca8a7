package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// A cursor value that is not an address, with no parameter to send it in:
// the described setting cannot be followed, and says so.
func TestListProfiles_describedCursorWithoutParameter(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 12, standin.Options{Paging: "described", PageSize: 5}, func(c *Config) {
		c.Paging = &PagingConfig{NextFrom: "meta.cursor.next", PageSizeParam: "limit", PageSize: 5}
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
		paging        PagingConfig
		claimed, why  string
		have, request int
	}{
		"json-server 0.17, Link that only _page brings": {"json_server", PagingConfig{NextFrom: "header:Link", PageSizeParam: "_limit", PageSize: 5},
			"23 profiles", `paging.next_from ("header:Link") found nothing on page 1`, 5, 1},
		"json-server 1.0, a mistyped next_from": {"json_server_v1", PagingConfig{NextFrom: "links.next", PageSizeParam: "_per_page", PageSize: 5},
			"23 profiles", `paging.next_from ("links.next") found nothing on page 1`, 5, 1},
		"offsets with a total, described as a cursor": {"offset_limit", PagingConfig{NextFrom: "next_cursor", NextParam: "cursor"},
			"23 profiles", `paging.next_from ("next_cursor") found nothing`, 5, 1},
		"page numbers that stop short of the page count": {"page_number", PagingConfig{PageParam: "page", FirstPage: 1, PageSizeParam: "per_page", PageSize: 7},
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
		c.Paging = &PagingConfig{NextFrom: "header:Link", NextParam: "page"}
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
		c.Paging = &PagingConfig{PageParam: "p", FirstPage: 0, TotalFrom: "header:X-Profiles-All"}
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil || list.Incomplete != nil || len(list.Profiles) != 4 {
		t.Fatalf("%d profiles, err %v, incomplete %v", len(list.Profiles), err, list.Incomplete)
	}
	if !slices.Equal(requests, []string{"p=0", "p=1"}) {
		t.Errorf("requests %q", requests)
	}
}
