package provider

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

func noEnv(string) string { return "" }

func TestResolveSettings_precedence(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		EnvEnvironment: "development", EnvBaseURL: "https://env.example.com/api/v1", EnvAPIToken: "env-token",
	}
	getenv := func(k string) string { return env[k] }

	// Environment variables when the block is empty.
	s, diags := resolveSettings(BrowserProfileProviderModel{}, getenv, nil)
	if diags.HasError() || s.environment != "development" || s.client.BaseURL.String() != "https://env.example.com/api/v1" || s.client.Token != "env-token" {
		t.Errorf("from environment: %+v %v", s, diags)
	}
	// The block wins over every variable.
	s, diags = resolveSettings(BrowserProfileProviderModel{
		Environment: types.StringValue("production"),
		BaseURL:     types.StringValue("https://block.example.com/api/v1/"),
		APIToken:    types.StringValue("block-token"),
	}, getenv, nil)
	if diags.HasError() || s.environment != "production" || s.client.BaseURL.String() != "https://block.example.com/api/v1" || s.client.Token != "block-token" {
		t.Errorf("from block: %+v %v", s, diags)
	}
	// Defaults: production, and its built-in address.
	s, diags = resolveSettings(BrowserProfileProviderModel{APIToken: types.StringValue("t")}, noEnv,
		map[string]string{Production: "https://prod.example.com/api/v1"})
	if diags.HasError() || s.environment != "production" || s.client.BaseURL.Host != "prod.example.com" {
		t.Errorf("defaults: %+v %v", s, diags)
	}
	if s.client.MaxRetries != 5 || s.client.MaxConcurrent != 8 || s.client.RequestsPerSecond != 0 {
		t.Errorf("tuning defaults: %+v", s.client)
	}
}

// Environment variables never cross environments: a block takes its own
// environment's variables, and the generic ones only for the environment
// BROWSERPROFILE_ENVIRONMENT names (production when unset).
func TestResolveSettings_environmentVariablesNeverCrossEnvironments(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		EnvBaseURL: "https://prod.example.com/api/v1", EnvAPIToken: "prod-token",
		"BROWSERPROFILE_DEVELOPMENT_BASE_URL": "https://dev.example.com/api/v1", "BROWSERPROFILE_DEVELOPMENT_API_TOKEN": "dev-token",
	}
	getenv := func(k string) string { return env[k] }
	for environment, want := range map[string]struct{ host, token string }{
		Production:  {"prod.example.com", "prod-token"},
		Development: {"dev.example.com", "dev-token"},
	} {
		s, diags := resolveSettings(BrowserProfileProviderModel{Environment: types.StringValue(environment)}, getenv, nil)
		if diags.HasError() || s.client.BaseURL.Host != want.host || s.client.Token != want.token {
			t.Errorf("%s: %s, %q, %v", environment, s.client.BaseURL, s.client.Token, diags)
		}
	}
	// A development block with only the generic variables, meant for
	// production, takes neither, and says which variable it reads.
	generic := func(k string) string {
		if strings.Contains(k, "_"+strings.ToUpper(Development)+"_") {
			return ""
		}
		return env[k]
	}
	_, diags := resolveSettings(BrowserProfileProviderModel{Environment: types.StringValue(Development), BaseURL: types.StringValue("https://dev.example.com/api/v1")}, generic, nil)
	if !diags.HasError() || !strings.Contains(fmt.Sprint(diags), "or BROWSERPROFILE_DEVELOPMENT_API_TOKEN in the environment") || strings.Contains(fmt.Sprint(diags), EnvAPIToken) {
		t.Errorf("diags %v", diags)
	}
	// The generic variables serve the environment BROWSERPROFILE_ENVIRONMENT names.
	env[EnvEnvironment] = Development
	s, diags := resolveSettings(BrowserProfileProviderModel{}, generic, nil)
	if diags.HasError() || s.environment != Development || s.client.Token != "prod-token" {
		t.Errorf("%+v %v", s, diags)
	}
	// The environment's own variable wins over the generic one.
	s, diags = resolveSettings(BrowserProfileProviderModel{}, getenv, nil)
	if diags.HasError() || s.client.Token != "dev-token" || s.client.BaseURL.Host != "dev.example.com" {
		t.Errorf("%+v %v", s, diags)
	}
}

func TestResolveSettings_failures(t *testing.T) {
	t.Parallel()
	base := types.StringValue("https://api.example.com/api/v1")
	cases := map[string]struct {
		cfg    BrowserProfileProviderModel
		env    map[string]string
		path   string
		detail string
	}{
		"no built-in address": {
			cfg:  BrowserProfileProviderModel{APIToken: types.StringValue("t"), Environment: types.StringValue("development")},
			path: "base_url", detail: "no built-in base address for the development environment",
		},
		"missing token": {
			cfg: BrowserProfileProviderModel{BaseURL: base}, path: "api_token", detail: "Set api_token in the provider block",
		},
		"unknown token": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringUnknown()}, path: "api_token", detail: EnvAPIToken,
		},
		"token with inner space": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("Bearer abc")}, path: "api_token", detail: "copied whole",
		},
		"bad environment variable": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvEnvironment: "staging"},
			path: "environment", detail: `"staging"`,
		},
		"bad base address variable": {
			cfg: BrowserProfileProviderModel{APIToken: types.StringValue("t")}, env: map[string]string{EnvBaseURL: "http://api.example.com/api/v1"},
			path: "base_url", detail: "loopback",
		},
		"unknown tuning value": {
			cfg:  BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t"), MaxRetries: types.Int64Unknown()},
			path: "max_retries", detail: "known at plan time",
		},
		"rate variable with trailing junk": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvRequestsPerSecond: "10abc"},
			path: "requests_per_second", detail: `"10abc"`,
		},
		"bad rate variable": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvRequestsPerSecond: "fast"},
			path: "requests_per_second", detail: EnvRequestsPerSecond,
		},
	}
	for name, tc := range cases {
		_, diags := resolveSettings(tc.cfg, func(k string) string { return tc.env[k] }, nil)
		if !diags.HasError() {
			t.Errorf("%s: no error", name)
			continue
		}
		d, ok := diags.Errors()[0].(diag.DiagnosticWithPath)
		if !ok || !d.Path().Equal(path.Root(tc.path)) || !strings.Contains(d.Detail(), tc.detail) {
			t.Errorf("%s: %v", name, diags.Errors()[0])
		}
	}
}

func TestResolveSettings_trimsSurroundingWhiteSpaceWithWarning(t *testing.T) {
	t.Parallel()
	s, diags := resolveSettings(BrowserProfileProviderModel{
		BaseURL: types.StringValue("https://api.example.com/api/v1"), APIToken: types.StringValue("  zq9secret\n"),
	}, noEnv, nil)
	if diags.HasError() || s.client.Token != "zq9secret" || diags.WarningsCount() != 1 {
		t.Errorf("token %q, diags %v", s.client.Token, diags)
	}
	if strings.Contains(fmt.Sprint(diags), "zq9secret") {
		t.Errorf("the warning quotes the token: %v", diags)
	}
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
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6,
				Steps: []resource.TestStep{{
					Config:      "provider \"browserprofile\" {\n  " + tc.block + "\n}\ndata \"browserprofile_profiles\" \"all\" {}\n",
					ExpectError: words(tc.want),
					PlanOnly:    true,
				}},
			})
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

// expectState runs config in one step and checks the state it leaves.
func expectState(t *testing.T, config string, checks ...statecheck.StateCheck) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6,
		Steps:                    []resource.TestStep{{Config: config, ConfigStateChecks: checks}},
	})
}
