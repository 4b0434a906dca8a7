package provider

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// protoV6 serves the provider in-process, through the same server as
// main.go; no terraform init is needed.
var protoV6 = map[string]func() (tfprotov6.ProviderServer, error){
	"browserprofile": NewServer("test", "", ""),
}

// testStandin starts the stand-in API with the demo environments on
// loopback and returns its root URL.
func testStandin(t *testing.T, opts standin.Options) (string, *standin.Server) {
	t.Helper()
	if opts.Environments == nil {
		opts.Environments = standin.DemoEnvironments()
	}
	s := standin.New(opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL, s
}

// devProvider is a provider block for the stand-in's development environment.
func devProvider(root string, extra ...string) string {
	return providerBlock(root+"/development/api/v1", standin.DemoDevelopmentToken, append([]string{"min_wait_seconds = 1"}, extra...)...)
}

// providerBlock is a development provider block for any base address and token.
func providerBlock(baseURL, token string, extra ...string) string {
	return fmt.Sprintf(`
provider "browserprofile" {
  environment = "development"
  base_url    = %q
  api_token   = %q
  %s
}
`, baseURL, token, strings.Join(extra, "\n  "))
}

// words matches each phrase in order, however Terraform wraps the lines of
// a diagnostic: the phrases are our own words, quoted literally.
func words(phrases ...string) *regexp.Regexp {
	quoted := make([]string, len(phrases))
	for i, p := range phrases {
		fields := strings.Fields(p)
		for j, f := range fields {
			fields[j] = regexp.QuoteMeta(f)
		}
		quoted[i] = strings.Join(fields, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, `.*`))
}

func TestProvider_schemaIsValid(t *testing.T) {
	t.Parallel()
	if _, err := protoV6["browserprofile"](); err != nil {
		t.Fatal(err)
	}
}

// noEnv is an environment that sets nothing but where the pace is shared:
// a temporary directory (TestMain), never the user's cache.
func noEnv(k string) string {
	if k == EnvPaceDir {
		return testPaceDir
	}
	return ""
}

func TestAccProvider_validateCatchesBadValuesOffline(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ block, want string }{
		"environment": {`environment = "prod"`, `environment is "prod"; it must be "production" or "development".`},
		"placeholder": {`base_url = "{base_url}"`, `still holds the placeholder {base_url}; a real address is needed`},
		"suffix":      {`base_url = "https://api.example.com/v1"`, `its path must end in /api/v1`},
		"plain http":  {`base_url = "http://api.example.com/api/v1"`, `plain http:// is accepted only for loopback hosts`},
		"token space": {`api_token = "abc def"`, `was the token copied whole?`},
		"paging path": {`paging = { next_from = "meta..next" }`, `a dot-separated path of JSON field names`},
		"paging param": {`paging = {
    next_from  = "meta.next"
    next_param = "a b"
  }`, `next_param`},
		"page size alone": {`paging = {
    next_from = "meta.next"
    page_size = 50
  }`, `page_size_param`},
		"paging without a way on": {`paging = {
    page_size_param = "limit"
    page_size       = 50
  }`, `paging needs exactly one way to the next page, and it has 0 (none): next_from for`},
		"paging two ways on": {`paging = {
    next_from  = "meta.next"
    page_param = "page"
  }`, `paging needs exactly one way to the next page, and it has 2 (next_from, page_param)`},
		"next_param with page numbers": {`paging = {
    page_param = "page"
    next_param = "cursor"
  }`, `Attribute "paging.next_from" must be specified when "paging.next_param" is specified`},
		"first_page with offsets": {`paging = {
    offset_param = "offset"
    first_page   = 0
  }`, `Attribute "paging.page_param" must be specified when "paging.first_page" is specified`},
		"first_page of 2": {`paging = {
    page_param = "page"
    first_page = 2
  }`, `first_page value must be between 0 and 1`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectInvalid(t, "provider \"browserprofile\" {\n  "+tc.block+"\n}\ndata \"browserprofile_profiles\" \"all\" {}\n", words(tc.want))
		})
	}
}

func TestAccProvider_missingTokenNamesAttributeAndVariable(t *testing.T) {
	t.Setenv(EnvAPIToken, "")
	t.Setenv(envVar(Development, EnvAPIToken), "")
	root, _ := testStandin(t, standin.Options{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "browserprofile" {
  environment = "development"
  base_url    = %q
}
data "browserprofile_profiles" "all" {}
`, root+"/development/api/v1"),
			ExpectError: words("Missing API token", "Set api_token in the provider block", "or BROWSERPROFILE_DEVELOPMENT_API_TOKEN in the environment"),
		}},
	})
}

func TestAccProvider_environmentVariablesConfigureAnEmptyBlock(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	t.Setenv(EnvEnvironment, "development")
	t.Setenv(EnvBaseURL, root+"/development/api/v1")
	t.Setenv(EnvAPIToken, standin.DemoDevelopmentToken+"\n")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps: []resource.TestStep{{
			Config: `
provider "browserprofile" {}
data "browserprofile_profile" "one" { profile_key = "team/alpha" }
`,
			Check: resource.TestCheckResourceAttr("data.browserprofile_profile.one", "profile_key", "team/alpha"),
		}},
	})
}

func TestAccProvider_noBuiltInAddressSaysHowToFix(t *testing.T) {
	t.Setenv(EnvBaseURL, "")
	t.Setenv(envVar(Development, EnvBaseURL), "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps: []resource.TestStep{{
			Config: `
provider "browserprofile" {
  environment = "development"
  api_token   = "anything"
}
data "browserprofile_profiles" "all" {}
`,
			ExpectError: words("No base address for the development environment", "Set base_url in the provider block, or BROWSERPROFILE_DEVELOPMENT_BASE_URL in the environment"),
		}},
	})
}

// expectError runs config in one step, with the stand-in behind it, and
// expects the plan to fail with an error matching want.
func expectError(t *testing.T, config string, want *regexp.Regexp) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps:                    []resource.TestStep{{Config: config, ExpectError: want}},
	})
}

// expectInvalid plans config with no service behind it, and expects the
// error matching want that validation gives offline.
func expectInvalid(t *testing.T, config string, want *regexp.Regexp) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps:                    []resource.TestStep{{Config: config, ExpectError: want, PlanOnly: true}},
	})
}

// expectState runs config in one step and checks the state it leaves.
func expectState(t *testing.T, config string, checks ...statecheck.StateCheck) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps:                    []resource.TestStep{{Config: config, ConfigStateChecks: checks}},
	})
}
