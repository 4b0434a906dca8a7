package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

func TestAccProfileDataSource_readsAwkwardKeysExactly(t *testing.T) {
	for _, single := range []string{"object", "data"} {
		t.Run(single, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{Single: single})
			config := devProvider(root)
			var checks []statecheck.StateCheck
			for i, key := range devKeys {
				name := fmt.Sprintf("data.browserprofile_profile.p%d", i)
				config += fmt.Sprintf("data \"browserprofile_profile\" \"p%d\" { profile_key = %q }\n", i, key)
				checks = append(checks,
					statecheck.ExpectKnownValue(name, tfjsonpath.New("profile_key"), knownvalue.StringExact(key)),
					statecheck.ExpectKnownValue(name, tfjsonpath.New("raw_json"), knownvalue.StringExact(fixtureRecord(t, key))))
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6,
				Steps:                    []resource.TestStep{{Config: config, ConfigStateChecks: checks}},
			})
		})
	}
}

func TestAccProfileDataSource_refusesWhatIsNotAKey(t *testing.T) {
	cases := map[string][]string{
		"{profile_key}": {"Placeholder in profile_key", "still holds the placeholder {profile_key}. A real profile_key is needed"},
		"bp_{id}":       {"Placeholder in profile_key", "{id}"},
		"":              {"Not a profile_key", "a profile_key cannot be empty"},
		".":             {"Not a profile_key", `"." and ".." are path segments, not profile_keys`},
		"..":            {"Not a profile_key", `"." and ".." are path segments`},
	}
	for key, want := range cases {
		t.Run(key, func(t *testing.T) {
			// No provider configuration at all: this is caught offline.
			expectInvalid(t, fmt.Sprintf("data \"browserprofile_profile\" \"p\" { profile_key = %q }\n", key), words(want...))
		})
	}
}

func TestAccProfileDataSource_displayNameSuggestsKey(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectError(t, devProvider(root)+`data "browserprofile_profile" "p" { profile_key = "Marketing Team" }`,
		words(`Profile not found`, `No profile has profile_key "Marketing Team" in the development environment`,
			`Did you mean "bp_dev_01J0A1B2C3"? That profile's field "name" holds the value you gave.`,
			"profile_key is the identifier from the service's list", "not a display name",
			"Response: HTTP 404"))
}

func TestAccProfileDataSource_nestedFieldAndCaseSuggestKey(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	for given, want := range map[string]string{
		"Marketing (shared)": `Did you mean "bp_dev_01J0A1B2C3"? That profile's field "labels.display"`,
		"TEAM/ALPHA":         `Did you mean "team/alpha"? Keys are matched exactly, case included.`,
	} {
		t.Run(given, func(t *testing.T) {
			expectError(t, devProvider(root)+fmt.Sprintf(`data "browserprofile_profile" "p" { profile_key = %q }`, given),
				words(want))
		})
	}
}

func TestAccProfileDataSource_keyFromOtherEnvironment(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	expectError(t, devProvider(root)+`data "browserprofile_profile" "p" { profile_key = "bp_prod_01HZX3K9Q2" }`,
		words(`No profile has profile_key "bp_prod_01HZX3K9Q2" in the development environment`,
			"Identifiers are environment-specific: this provider reads the development environment",
			"a key copied from the other environment is not found here"))
}

func TestAccProfileDataSource_sendsTheContractsHeaders(t *testing.T) {
	root, s := testStandin(t, standin.Options{})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps: []resource.TestStep{{
			Config: devProvider(root) + `data "browserprofile_profile" "p" { profile_key = "team/alpha" }`,
			Check: func(*terraform.State) error {
				h, _ := s.Header.Load().(http.Header)
				want := map[string]*regexp.Regexp{
					"Authorization": regexp.MustCompile(`^Bearer ` + regexp.QuoteMeta(standin.DemoDevelopmentToken) + `$`),
					"Accept":        regexp.MustCompile(`^application/json$`),
					"User-Agent":    regexp.MustCompile(`^terraform-provider-browserprofile/test \(\+https://registry\.terraform\.io/providers/browserprofile/browserprofile\) Terraform/\d+\.\d+`),
				}
				for name, re := range want {
					if !re.MatchString(h.Get(name)) {
						return fmt.Errorf("%s = %q, want %s", name, h.Get(name), re)
					}
				}
				return nil
			},
		}},
	})
}

// Missing keys share the one list read of the plan, with the list data
// source or without it: 5 missing among 35, a list of 20 pages, 20 list
// requests at most.
func TestAccProfileDataSource_missingKeysShareOneListRead(t *testing.T) {
	for _, withList := range []bool{false, true} {
		t.Run(fmt.Sprintf("with the list=%v", withList), func(t *testing.T) {
			root, s := testStandin(t, standin.Options{Paging: "link", PageSize: 10, Environments: []standin.Environment{
				{Name: "development", Token: standin.DemoDevelopmentToken, Profiles: standin.Generate(200)},
			}})
			config := devProvider(root)
			for i := range 30 {
				config += fmt.Sprintf("data \"browserprofile_profile\" \"present%d\" { profile_key = \"bp_gen_%07d\" }\n", i, i*6)
			}
			for i := range 5 {
				config += fmt.Sprintf("data \"browserprofile_profile\" \"missing%d\" { profile_key = \"Generated profile %d\" }\n", i, 1000+i)
			}
			if withList {
				config += `data "browserprofile_profiles" "all" {}` + "\n"
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6,
				Steps: []resource.TestStep{{
					Config: config, PlanOnly: true,
					ExpectError: regexp.MustCompile(`Profile not found`),
				}},
			})
			if n := s.ListRequests.Load(); n > 20 {
				t.Errorf("%d list requests for a plan with 5 missing keys and a list of 20 pages", n)
			}
		})
	}
}

// fields trims the record to the members named and its key, as the list
// does; a member this profile does not carry fails the plan, naming what it
// does carry and the member meant.
func TestAccProfileDataSource_fieldsTrimTheRecord(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	config := func(fields string) string {
		return devProvider(root) + "data \"browserprofile_profile\" \"p\" {\n  profile_key = \"bp_dev_01J0A1B2C3\"\n  fields = " + fields + "\n}"
	}
	t.Run("trimmed", func(t *testing.T) {
		expectState(t, config(`["status", "proxy.country"]`),
			statecheck.ExpectKnownValue("data.browserprofile_profile.p", tfjsonpath.New("raw_json"),
				knownvalue.StringExact(`{"profile_key":"bp_dev_01J0A1B2C3","status":"active","proxy":{"country":"FR"}}`)),
			statecheck.ExpectKnownValue("data.browserprofile_profile.p", tfjsonpath.New("fields"),
				knownvalue.ListExact(stringValues([]string{"status", "proxy.country"}))))
	})
	t.Run("missing", func(t *testing.T) {
		expectError(t, config(`["name", "proxy.contry"]`),
			regexp.MustCompile(`(?s)The profile has no member "proxy.contry".*fields\[1\]\s+names\s+"proxy.contry",\s+which\s+the\s+profile\s+"bp_dev_01J0A1B2C3"\s+does\s+not\s+carry\.\s+Did\s+you\s+mean\s+"proxy.country"\?.*The\s+record\s+carries:\s+"proxy.country",\s+"proxy.type".*not\s+at\s+the\s+jsondecode\(\)`))
	})
}

// What cannot name a member fails at validate, as in the list.
func TestAccProfileDataSource_validateCatchesFieldsMistakesOffline(t *testing.T) {
	for config, want := range map[string]string{
		`fields = ["status", "status"]`: `duplicate values of: "status"`,
		`fields = ["proxy..country"]`:   `Not a member path`,
		`fields = []`:                   `list must contain at least 1`,
	} {
		t.Run(want, func(t *testing.T) {
			expectInvalid(t, "data \"browserprofile_profile\" \"p\" {\n  profile_key = \"bp_1\"\n  "+config+"\n}", regexp.MustCompile(want))
		})
	}
}
