package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// devKeys are the development fixture's keys in byte order.
var devKeys = []string{"100% legit", "Trailing.Dot.", "bp_dev_01J0A1B2C3", "café-東京", "q?x=1#frag", "team/alpha"}

// fixtureRecord returns the development fixture's record for key, byte for byte.
func fixtureRecord(t *testing.T, key string) string {
	t.Helper()
	for _, p := range standin.DemoEnvironments()[1].Profiles {
		var rec struct {
			Key string `json:"profile_key"`
		}
		if json.Unmarshal(p, &rec) == nil && rec.Key == key {
			return string(p)
		}
	}
	t.Fatalf("no fixture record %q", key)
	return ""
}

// listConfig reads the list from the stand-in's development environment.
func listConfig(root string) string {
	return devProvider(root) + `data "browserprofile_profiles" "all" {}`
}

// listsDevKeys checks that the list holds every development key, in order.
var listsDevKeys = statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profile_keys"),
	knownvalue.ListExact(stringValues(devKeys)))

// listsRecord checks that the list's element index is the fixture record of
// key, byte for byte.
func listsRecord(t *testing.T, index int, key string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profiles").AtSliceIndex(index),
		knownvalue.ObjectExact(map[string]knownvalue.Check{
			"profile_key": knownvalue.StringExact(key),
			"raw_json":    knownvalue.StringExact(fixtureRecord(t, key)),
		}))
}

func stringValues(ss []string) []knownvalue.Check {
	checks := make([]knownvalue.Check, len(ss))
	for i, s := range ss {
		checks[i] = knownvalue.StringExact(s)
	}
	return checks
}

func TestAccProfilesDataSource_listsEveryProfileSortedByKey(t *testing.T) {
	for _, shape := range []string{"array", "data", "profiles_total", "data_items"} {
		t.Run(shape, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{Shape: shape})
			expectState(t, listConfig(root),
				listsDevKeys,
				listsRecord(t, 1, "Trailing.Dot."),
			)
		})
	}
}

func TestAccProfilesDataSource_followsPages(t *testing.T) {
	root, s := testStandin(t, standin.Options{Paging: "link", PageSize: 2})
	expectState(t, listConfig(root), listsDevKeys)
	if s.Requests.Load() < 3 {
		t.Errorf("%d requests; the three pages were not all read", s.Requests.Load())
	}
}

// Feeding keys on is the users' main use. terraform-plugin-testing cannot
// shim for_each instances into its state, so count stands in here; the
// end-to-end test in internal/e2e covers for_each through the CLI.
func TestAccProfilesDataSource_feedsKeysIntoOtherResources(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectState(t, devProvider(root)+`
data "browserprofile_profiles" "all" {}

resource "terraform_data" "per_profile" {
  count = length(data.browserprofile_profiles.all.profile_keys)
  input = {
    key  = data.browserprofile_profiles.all.profile_keys[count.index]
    name = jsondecode(data.browserprofile_profiles.all.profiles[count.index].raw_json).name
  }
}
`,
		statecheck.ExpectKnownValue("terraform_data.per_profile[4]", tfjsonpath.New("output"),
			knownvalue.ObjectExact(map[string]knownvalue.Check{
				"key":  knownvalue.StringExact("q?x=1#frag"),
				"name": knownvalue.StringExact("Query-looking key"),
			})),
		statecheck.ExpectKnownValue("terraform_data.per_profile[0]", tfjsonpath.New("output").AtMapKey("key"),
			knownvalue.StringExact("100% legit")),
	)
}

func TestAccProfilesDataSource_tokenRejectedListsTheThreeChecks(t *testing.T) {
	root, _ := testStandin(t, standin.Options{EchoToken: true})
	// The production token against the development address.
	expectError(t, providerBlock(root+"/development/api/v1", standin.DemoProductionToken)+`data "browserprofile_profiles" "all" {}`,
		words(
			"API token rejected by the development environment",
			"Request: GET "+root+"/development/api/v1/browsers",
			"Environment: development",
			"Response: HTTP 401, request id req-",
			`"received":"Bearer ***"`,
			"1. the token was created for the development environment", "valid only against its base address, "+root+"/development/api/v1",
			`2. it is sent as "Authorization: Bearer <token>"`,
			"3. it has not been revoked and was copied whole"))
}

func TestAccProfilesDataSource_wrongBaseAddressIsNotJSON(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectError(t, providerBlock(root+"/app/api/v1", standin.DemoDevelopmentToken)+`data "browserprofile_profiles" "all" {}`,
		words("The base address did not answer with JSON", "Response: HTTP 200", "Body: <!doctype html>",
			"must end in /api/v1 and be the API address of the development environment"))
}

func TestAccProfilesDataSource_retriesRateLimitsAndOutagesSilently(t *testing.T) {
	// Each kind of fault, rarely two in a row: the waits between attempts
	// double with each, and this test is about silence, not patience.
	root, s := testStandin(t, standin.Options{LimitEvery: 6, FailEvery: 9, ResetEvery: 13, Paging: "link", PageSize: 2})
	expectState(t, listConfig(root), listsDevKeys)
	if s.Limited.Load() == 0 {
		t.Error("the stand-in never rate limited; the test proves nothing")
	}
}

func TestAccProfilesDataSource_outageReportsLastStatusAndAttempts(t *testing.T) {
	root, _ := testStandin(t, standin.Options{FailEvery: 1})
	expectError(t, devProvider(root, "max_retries = 1")+`data "browserprofile_profiles" "all" {}`,
		words("The service was rate limiting or unavailable", "Response: HTTP 503, request id req-000002, after 2 attempts over",
			"Body: <html><body><h1>503 Service Temporarily Unavailable</h1>", "raise max_retries or max_wait_seconds"))
}

func TestAccProfilesDataSource_longRetryAfterFailsAtOnce(t *testing.T) {
	root, s := testStandin(t, standin.Options{LimitEvery: 1, RetryAfter: "7200"})
	expectError(t, listConfig(root),
		words("The service asked to retry later", "Response: HTTP 429",
			"asked for a pause of 2h0m0s (Retry-After: 7200), longer than the provider waits (max_wait_seconds). Try again after"))
	if n := s.Requests.Load(); n > 2 {
		t.Errorf("%d requests; a long Retry-After must not be retried", n)
	}
}

// A service that sends no Retry-After but says when its limit resets
// (X-RateLimit-Reset, a Unix time) is waited for the same way, and the
// message names the header it read.
func TestAccProfilesDataSource_farRateLimitResetFailsAtOnce(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(2*time.Hour).Unix(), 10)
	root, s := testStandin(t, standin.Options{LimitEvery: 1, RetryAfterForm: "reset", RetryAfter: reset})
	expectError(t, listConfig(root),
		words("The service asked to retry later", "Response: HTTP 429",
			"(X-RateLimit-Reset: "+reset+"), longer than the provider waits (max_wait_seconds). Try again after"))
	if n := s.Requests.Load(); n > 2 {
		t.Errorf("%d requests; a reset two hours away must not be retried", n)
	}
}

func TestAccProfilesDataSource_readsEveryPagingConvention(t *testing.T) {
	for name, mode := range standin.PagingModes {
		for _, described := range []bool{false, true} {
			if !described && !mode.Complete || described && mode.Paging == nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/described=%v", name, described), func(t *testing.T) {
				root, _ := testStandin(t, standin.Options{Paging: name, PageSize: 4})
				var extra []string
				if described {
					extra = append(extra, pagingSetting(mode.Paging, 4))
				}
				expectState(t, devProvider(root, extra...)+`data "browserprofile_profiles" "all" {}`,
					listsDevKeys, listsRecord(t, 3, "café-東京"))
			})
		}
	}
}

// pagingSetting writes the provider block's paging setting from attribute
// values, with page size n where a page size parameter is named.
func pagingSetting(attrs map[string]string, n int) string {
	var b strings.Builder
	b.WriteString("paging = {\n")
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(&b, "    %s = %q\n", name, attrs[name])
	}
	if attrs["page_size_param"] != "" {
		fmt.Fprintf(&b, "    page_size = %d\n", n)
	}
	b.WriteString("  }")
	return b.String()
}

// A described paging that ignores what the service claims fails as loudly
// as a convention would, naming the setting that found nothing.
func TestAccProfilesDataSource_describedPagingShortOfATotalIsAnError(t *testing.T) {
	for name, tc := range map[string]struct {
		mode   string
		paging map[string]string
		want   string
	}{
		"Link that only _page brings": {"json_server", map[string]string{"next_from": "header:Link", "page_size_param": "_limit"},
			`listed 4 profile(s) over 1 page(s), but it claimed 6 profiles. Paging stopped because paging.next_from ("header:Link") found nothing on page 1.`},
		"mistyped next_from": {"json_server_v1", map[string]string{"next_from": "links.next", "page_size_param": "_per_page"},
			`listed 4 profile(s) over 1 page(s), but it claimed 6 profiles. Paging stopped because paging.next_from ("links.next") found nothing on page 1.`},
	} {
		t.Run(name, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{Paging: tc.mode, PageSize: 4})
			expectError(t, devProvider(root, pagingSetting(tc.paging, 4))+`data "browserprofile_profiles" "all" {}`,
				words("The profile list is incomplete", tc.want, "Check the provider block's paging setting against the service's paging",
					"set allow_incomplete_list = true in the provider block"))
		})
	}
}

func TestAccProfilesDataSource_readsPagesThroughFaults(t *testing.T) {
	for name, opts := range map[string]standin.Options{
		"slow answers":          {Delay: 200 * time.Millisecond, Paging: "link", PageSize: 4},
		"resets and html 503s":  {ResetEvery: 5, FailEvery: 7, Shape: "data_items"},
		"rate limited, 1s wait": {LimitEvery: 2, Paging: "next_url", PageSize: 4},
	} {
		t.Run(name, func(t *testing.T) {
			root, _ := testStandin(t, opts)
			expectState(t, listConfig(root), listsDevKeys)
		})
	}
}

// A list that may be short fails the plan, saying how many arrived, what
// the service claimed, why paging stopped, and the setting that accepts it.
func TestAccProfilesDataSource_incompleteListIsAnError(t *testing.T) {
	for paging, want := range map[string]string{
		"has_more":      "listed 4 profile(s) over 2 page(s), but it claimed more profiles (has_more). Paging stopped because page 2 brought no profile_key",
		"offhost":       "listed 4 profile(s) over 1 page(s), but it claimed a further page. Paging stopped because the next page is at http://elsewhere.invalid/…",
		"total_lies":    "listed 6 profile(s) over 1 page(s), but it claimed 11 profiles. Paging stopped because the response gave no way to reach more",
		"empty_forever": "6 empty pages in a row still said there was more",
		"opaque_next":   `the response's "next" field holds a value that is neither an address nor a known cursor`,
	} {
		t.Run(paging, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{Paging: paging, PageSize: 4})
			expectError(t, listConfig(root), words("The profile list is incomplete", want,
				"Request: GET "+root+"/development/api/v1/browsers", "Environment: development",
				"every resource keyed by a missing profile would be destroyed",
				"describe it with the provider block's paging setting", "set allow_incomplete_list = true in the provider block"))
		})
	}
}

// With allow_incomplete_list, the partial list is returned (the warning is
// checked through the CLI in internal/e2e).
func TestAccProfilesDataSource_allowIncompleteListReturnsWhatArrived(t *testing.T) {
	root, _ := testStandin(t, standin.Options{Paging: "offhost", PageSize: 4})
	var firstPage []string
	for _, rec := range standin.DemoEnvironments()[1].Profiles[:4] {
		var r struct {
			Key string `json:"profile_key"`
		}
		if err := json.Unmarshal(rec, &r); err != nil {
			t.Fatal(err)
		}
		firstPage = append(firstPage, r.Key)
	}
	slices.Sort(firstPage)
	expectState(t, devProvider(root, "allow_incomplete_list = true")+`data "browserprofile_profiles" "all" {}`,
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profile_keys"),
			knownvalue.ListExact(stringValues(firstPage))))
}

func TestAccProfilesDataSource_hostileResponsesFailClearly(t *testing.T) {
	cases := map[string]struct {
		opts standin.Options
		want []string
	}{
		"truncated JSON": {standin.Options{Truncate: true}, []string{
			"The response has a shape the provider does not understand", "Problem: invalid JSON: unexpected end of JSON input"}},
		"redirect to another host": {standin.Options{RedirectTo: "http://127.0.0.2:1"}, []string{
			"Refused to follow a redirect to another host", "redirected to http://127.0.0.2:1/…", "the token never leaves for another host"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root, _ := testStandin(t, tc.opts)
			expectError(t, listConfig(root),
				words(tc.want...))
		})
	}
}

func TestAccProfilesDataSource_wrongPathPrefixIsNotFound(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectError(t, providerBlock(root+"/staging/api/v1", standin.DemoDevelopmentToken)+`data "browserprofile_profiles" "all" {}`,
		words("The base address has no profile list", "Request: GET "+root+"/staging/api/v1/browsers",
			"Response: HTTP 404", "the base address must end in /api/v1 and be the API address of the development environment"))
}

// filter keeps the profiles every block matches; fields trims each record
// to the members named and its key. Both are in the state as configured.
func TestAccProfilesDataSource_filterAndFieldsSelectFromTheWholeList(t *testing.T) {
	root, _ := testStandin(t, standin.Options{Paging: "link", PageSize: 2})
	expectState(t, devProvider(root)+`
data "browserprofile_profiles" "all" {
  filter {
    field  = "status"
    values = ["active"]
  }
  filter {
    field  = "proxy.country"
    values = ["JP", "FR"]
  }
  fields = ["status"]
}`,
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profile_keys"),
			knownvalue.ListExact(stringValues([]string{"100% legit", "bp_dev_01J0A1B2C3", "café-東京"}))),
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profiles").AtSliceIndex(2),
			knownvalue.ObjectExact(map[string]knownvalue.Check{
				"profile_key": knownvalue.StringExact("café-東京"),
				"raw_json":    knownvalue.StringExact(`{"profile_key":"café-東京","status":"active"}`),
			})),
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("fields"),
			knownvalue.ListExact(stringValues([]string{"status"}))),
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("filter").AtSliceIndex(1).AtMapKey("field"),
			knownvalue.StringExact("proxy.country")),
	)
}

// A filter that matches none of the profiles carrying its member is an
// ordinary empty result; one naming a member no profile carries fails,
// naming the argument, the members there are and the one meant.
func TestAccProfilesDataSource_aMemberNoProfileCarriesFailsThePlan(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectState(t, devProvider(root)+`
data "browserprofile_profiles" "all" {
  filter {
    field  = "status"
    values = ["retired"]
  }
}`, statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profile_keys"), knownvalue.ListExact(nil)))
	for name, block := range map[string]string{
		"filter": `filter {
    field  = "stauts"
    values = ["active"]
  }`,
		"fields": `fields = ["name", "stauts"]`,
	} {
		t.Run(name, func(t *testing.T) {
			where := map[string]string{"filter": `filter\[0\]\.field`, "fields": `fields\[1\]`}[name]
			expectError(t, devProvider(root)+"data \"browserprofile_profiles\" \"all\" {\n  "+block+"\n}",
				regexp.MustCompile(`(?s)No profile has the member "stauts".*`+where+`\s+names\s+"stauts",\s+which\s+none\s+of\s+the\s+6\s+profiles\s+in\s+the\s+list\s+carries\.\s+Did\s+you\s+mean\s+"status"\?.*"browser",\s+"created_at".*destroys\s+every\s+resource`))
		})
	}
}

// What cannot name a member, or two blocks on one field, fail at validate.
func TestAccProfilesDataSource_validateCatchesFilterMistakesOffline(t *testing.T) {
	for config, want := range map[string]string{
		`filter {
    field  = "proxy..country"
    values = ["DE"]
  }`: `Not a member path`,
		`filter {
    field  = "{field}"
    values = ["DE"]
  }`: `still holds the placeholder \{field\}`,
		`filter {
    field  = "status"
    values = []
  }`: `values list must contain at least 1`,
		`filter {
    field  = "status"
    values = ["active"]
  }
  filter {
    field  = "status"
    values = ["draft"]
  }`: `(?s)The same field in two filter blocks.*blocks 0 and 1 both name "status"`,
		`fields = ["status", "status"]`: `duplicate values of: "status"`,
		`fields = [""]`:                 `Not a member path`,
	} {
		t.Run(want, func(t *testing.T) {
			expectInvalid(t, "data \"browserprofile_profiles\" \"all\" {\n  "+config+"\n}", regexp.MustCompile(want))
		})
	}
}

// Several lists with different filters read the list once per plan and
// provider block: as many requests as one list alone.
func TestAccProfilesDataSource_filteredListsShareOneRead(t *testing.T) {
	requests := func(lists string) int64 {
		root, srv := testStandin(t, standin.Options{})
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6,
			Steps:                    []resource.TestStep{{Config: devProvider(root) + lists}},
		})
		return srv.Requests.Load()
	}
	one := requests(`data "browserprofile_profiles" "all" {}`)
	three := requests(`
data "browserprofile_profiles" "all" {}
data "browserprofile_profiles" "active" {
  filter {
    field  = "status"
    values = ["active"]
  }
}
data "browserprofile_profiles" "jp" {
  filter {
    field  = "proxy.country"
    values = ["JP"]
  }
  fields = ["name"]
}`)
	if one == 0 || three != one {
		t.Errorf("one list took %d requests, three filtered lists %d; want as many", one, three)
	}
}

// An incomplete list fails before any filter runs, whatever the filter
// would have kept: a filtered list is only as sure as the whole one.
func TestAccProfilesDataSource_anIncompleteListFailsBeforeTheFilter(t *testing.T) {
	root, _ := testStandin(t, standin.Options{Paging: "total_lies", PageSize: 4})
	expectError(t, devProvider(root)+`
data "browserprofile_profiles" "all" {
  filter {
    field  = "no_such_member"
    values = ["x"]
  }
}`, words("The profile list is incomplete", "listed 6 profile(s) over 1 page(s), but it claimed 11 profiles"))
}
