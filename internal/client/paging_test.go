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
	"sync"
	"testing"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// standinClient serves n generated profiles from the stand-in with opts.
func standinClient(t *testing.T, n int, opts standin.Options, tweak ...func(*Config)) (*Client, *standin.Server) {
	t.Helper()
	opts.Environments = []standin.Environment{{Name: "development", Token: testToken, Profiles: standin.Generate(n)}}
	s := standin.New(opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	base, err := ParseBaseURL(srv.URL + "/development/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{BaseURL: base, Token: testToken, MaxRetries: 5, MinWait: 5 * time.Millisecond, MaxWait: 2 * time.Second, Timeout: 30 * time.Second}
	for _, f := range tweak {
		f(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func wantKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("bp_gen_%07d", i)
	}
	return keys
}

func keysOf(ps []Profile) []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	return keys
}

func TestListProfiles_followsEveryPagingStyle(t *testing.T) {
	t.Parallel()
	for _, paging := range []string{"link", "next_url", "page_number", "offset_headers"} {
		for _, shape := range []string{"", "profiles_total", "data_items"} {
			t.Run(paging+"/"+shape, func(t *testing.T) {
				t.Parallel()
				c, s := standinClient(t, 23, standin.Options{Paging: paging, PageSize: 5, Shape: shape})
				list, err := c.ListProfiles(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keysOf(list.Profiles), wantKeys(23)) || len(list.Warnings) != 0 {
					t.Errorf("keys %v, warnings %q", keysOf(list.Profiles), list.Warnings)
				}
				if s.Requests.Load() != 5 {
					t.Errorf("%d requests for 5 pages", s.Requests.Load())
				}
			})
		}
	}
}

func TestListProfiles_warnsInsteadOfTruncatingSilently(t *testing.T) {
	t.Parallel()
	for paging, want := range map[string]string{
		"has_more": "gave no way to reach them",
		"offhost":  "not the base address's own scheme, host and port",
		"loop":     "paging loop",
	} {
		t.Run(paging, func(t *testing.T) {
			t.Parallel()
			c, s := standinClient(t, 12, standin.Options{Paging: paging, PageSize: 5})
			list, err := c.ListProfiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(list.Warnings, func(w string) bool {
				return strings.Contains(w, want) && strings.Contains(w, "incomplete")
			}) {
				t.Errorf("warnings %q, want one about %q", list.Warnings, want)
			}
			if len(list.Profiles) != 5 || s.Requests.Load() > 2 {
				t.Errorf("%d profiles after %d requests", len(list.Profiles), s.Requests.Load())
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
	if err != nil || len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "incomplete") {
		t.Errorf("list %+v, err %v", list, err)
	}
}

func TestListProfiles_pageLimit(t *testing.T) {
	t.Parallel()
	c, _ := standinClient(t, 30, standin.Options{Paging: "link", PageSize: 2}, func(c *Config) { c.MaxPages = 3 })
	list, err := c.ListProfiles(context.Background())
	if err != nil || len(list.Profiles) != 6 || len(list.Warnings) != 1 || !strings.Contains(list.Warnings[0], "Stopped after 3 pages") {
		t.Errorf("%d profiles, warnings %q, err %v", len(list.Profiles), list.Warnings, err)
	}
}

func TestListProfiles_sortedByteOrderAndDeduplicated(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `[{"profile_key":"b"},{"profile_key":"B"},{"profile_key":"a"},{"profile_key":"b","dup":true},{"profile_key":"é"}]`)
	})
	list, err := c.ListProfiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(list.Profiles); !slices.Equal(got, []string{"B", "a", "b", "é"}) {
		t.Errorf("keys %q", got)
	}
	if string(list.Profiles[2].Raw) != `{"profile_key":"b"}` || len(list.Warnings) != 1 {
		t.Errorf("kept %s, warnings %q", list.Profiles[2].Raw, list.Warnings)
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

func TestThrottle_adaptsToTheServicesRateLimit(t *testing.T) {
	t.Parallel()
	c, s := standinClient(t, 150, standin.Options{RateLimit: 50})
	var wg sync.WaitGroup
	errs := make(chan error, 150)
	for i := range 150 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.GetProfile(context.Background(), fmt.Sprintf("bp_gen_%07d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if limited, total := s.Limited.Load(), s.Requests.Load(); limited*10 > total {
		t.Errorf("%d of %d requests answered 429", limited, total)
	}
}
