package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

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
	// Defaults: production, and its built-in address. (Resolving opens no
	// pace directory: an environment with nothing set at all.)
	s, diags = resolveSettings(BrowserProfileProviderModel{APIToken: types.StringValue("t")}, func(string) string { return "" },
		map[string]string{Production: "https://prod.example.com/api/v1"})
	if diags.HasError() || s.environment != "production" || s.client.BaseURL.Host != "prod.example.com" {
		t.Errorf("defaults: %+v %v", s, diags)
	}
	if s.client.MaxRetries != 5 || s.client.MaxConcurrent != 8 || s.client.RequestsPerSecond != 0 || !s.client.SharePace || s.client.PaceDir != "" {
		t.Errorf("tuning defaults: %+v", s.client)
	}
}

// Sharing the pace: on unless the block or the environment turns it off;
// the block's directory, then the environment's.
func TestResolveSettings_sharing(t *testing.T) {
	t.Parallel()
	env := map[string]string{EnvSharePace: "false", EnvPaceDir: "/env/pace"}
	cfg := BrowserProfileProviderModel{BaseURL: types.StringValue("https://api.example.com/api/v1"), APIToken: types.StringValue("t")}
	s, diags := resolveSettings(cfg, func(k string) string { return env[k] }, nil)
	if diags.HasError() || s.client.SharePace || s.client.PaceDir != "/env/pace" {
		t.Errorf("from the environment: share %v in %q (%v)", s.client.SharePace, s.client.PaceDir, diags)
	}
	cfg.SharePace, cfg.PaceDir = types.BoolValue(true), types.StringValue("/block/pace")
	s, diags = resolveSettings(cfg, func(k string) string { return env[k] }, nil)
	if diags.HasError() || !s.client.SharePace || s.client.PaceDir != "/block/pace" {
		t.Errorf("from the block: share %v in %q (%v)", s.client.SharePace, s.client.PaceDir, diags)
	}
	env[EnvPaceStore] = " redis://env:6379\n"
	if s, diags = resolveSettings(cfg, func(k string) string { return env[k] }, nil); diags.HasError() || s.client.PaceStore != "redis://env:6379" {
		t.Errorf("a store from the environment: %q (%v)", s.client.PaceStore, diags)
	}
	cfg.PaceStore = types.StringValue("rediss://u:p@block:6380/2")
	if s, diags = resolveSettings(cfg, func(k string) string { return env[k] }, nil); diags.HasError() || s.client.PaceStore != "rediss://u:p@block:6380/2" {
		t.Errorf("a store from the block: %q (%v)", s.client.PaceStore, diags)
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
		"sharing neither true nor false": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvSharePace: "no"},
			path: "share_pace", detail: EnvSharePace + ` is "no"; it must be true or false`,
		},
		"a relative pace directory": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvPaceDir: ".pace"},
			path: "pace_dir", detail: EnvPaceDir + ` is ".pace"; it must be an absolute path`,
		},
		"a store that is not Redis": {
			cfg: BrowserProfileProviderModel{BaseURL: base, APIToken: types.StringValue("t")}, env: map[string]string{EnvPaceStore: "http://u:zq9pass@cache:6379"},
			path: "pace_store", detail: EnvPaceStore + " is not a Redis address runs can share their pace in: it must begin with redis://",
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

// The settings' failures as Terraform meets them, through ConfigureProvider:
// each an error on its attribute, naming what to set.
func TestResolveSettings_throughTheServer(t *testing.T) {
	t.Parallel()
	base := "https://api.example.com/api/v1"
	for name, tc := range map[string]struct {
		run        protocolRun
		attr       string
		words      []string
		asAWarning bool
	}{
		"a token known after apply": {protocolRun{settings: map[string]any{"api_token": unknown, "base_url": base}},
			`AttributeName("api_token")`, []string{"Unknown value for api_token", "or leave it out and set the BROWSERPROFILE_API_TOKEN environment variable"}, false},
		"no token": {protocolRun{settings: map[string]any{"base_url": base}},
			`AttributeName("api_token")`, []string{"Missing API token", "BROWSERPROFILE_PRODUCTION_API_TOKEN or BROWSERPROFILE_API_TOKEN"}, false},
		"no built-in address": {protocolRun{settings: map[string]any{"api_token": "t", "environment": "development"}},
			`AttributeName("base_url")`, []string{"No base address for the development environment", "a development build"}, false},
		"the built-in address": {protocolRun{settings: map[string]any{"api_token": "t"}, builtIn: [2]string{"https://prod.example.com/v2"}},
			`AttributeName("base_url")`, []string{"Invalid base address", "the built-in address of the production environment"}, false},
		"waits the wrong way round": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base, "min_wait_seconds": 10, "max_wait_seconds": 5}},
			`AttributeName("min_wait_seconds")`, []string{"min_wait_seconds exceeds max_wait_seconds", "The least wait before retrying an outage"}, false},
		"a relative pace directory": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base, "pace_dir": "pace"}},
			`AttributeName("pace_dir")`, []string{"Invalid pace_dir", `pace_dir is "pace"; it must be an absolute path`}, false},
		"a store with no host": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base, "pace_store": "redis://u:zq9pass@"}},
			`AttributeName("pace_store")`, []string{"Invalid pace_store", "pace_store is not a Redis address runs can share their pace in: it names no host",
				"the value is not shown"}, false},
		"a store's database that is not a number": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base,
			"pace_store": "redis://u:zq9pass@cache:6379/zq9pass"}},
			`AttributeName("pace_store")`, []string{"Invalid pace_store", "invalid database number"}, false},
		"a rate from the environment": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base},
			getenv: func(k string) string { return map[string]string{EnvRequestsPerSecond: "fast"}[k] }},
			`AttributeName("requests_per_second")`, []string{"Invalid BROWSERPROFILE_REQUESTS_PER_SECOND", `is "fast"`}, false},
		"an environment from the environment": {protocolRun{settings: map[string]any{"api_token": "t", "base_url": base},
			getenv: func(k string) string { return map[string]string{EnvEnvironment: "staging"}[k] }},
			`AttributeName("environment")`, []string{"Invalid environment"}, false},
		"a token with spaces around it": {protocolRun{settings: map[string]any{"api_token": " t\n", "base_url": base,
			"headers": map[string]any{"X-Gateway": "g"}, "paging": map[string]any{"page_param": "page"}}},
			`AttributeName("api_token")`, []string{"API token had surrounding white space"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			severity := tfprotov6.DiagnosticSeverityError
			if tc.asAWarning {
				severity = tfprotov6.DiagnosticSeverityWarning
			}
			tc.run.expectDiagnostic(t, severity, tc.attr, tc.words...)
		})
	}
}

// A pace store's address may hold a password: no diagnostic about it shows
// the password, wherever in the address it is.
func TestResolveSettings_aStoreMessageHidesItsPassword(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"redis://u:zq9pass@", "redis://u:zq9pass@cache/zq9pass", "http://u:zq9pass@cache", "redis://u:zq9pass@cache:x", "redis://u:zq9pass@cache?zq9pass=1"} {
		diags := protocolRun{settings: map[string]any{"api_token": "t", "base_url": "https://api.example.com/api/v1", "pace_store": store}}.diagnostics(t)
		if len(diags) == 0 {
			t.Errorf("%s: no diagnostic", store)
		}
		for _, d := range diags {
			if strings.Contains(d.Summary+d.Detail, "zq9pass") {
				t.Errorf("%s: %s: %s", store, d.Summary, d.Detail)
			}
		}
	}
}

// The User-Agent every request carries: the provider's own product, then
// TF_APPEND_USER_AGENT's (trimmed), then user_agent's, as sent to the
// service; a variable no header can carry is left out with a warning.
func TestResolveSettings_userAgent(t *testing.T) {
	t.Parallel()
	root, srv := testStandin(t, standin.Options{})
	run := protocolRun{
		settings: dev(root, map[string]any{"user_agent": []any{"nightly-drift/1.4 (+https://ci.example.com)", "team/payments"}}),
		typeName: profilesTypeName,
		getenv:   func(k string) string { return map[string]string{EnvAppendUserAgent: " Terragrunt/0.77\n"}[k] },
	}
	if diags := run.diagnostics(t); hasError(diags) {
		t.Fatal(diags)
	}
	h, _ := srv.Header.Load().(http.Header)
	want := regexp.MustCompile(`^terraform-provider-browserprofile/test \(\+https://registry\.terraform\.io/providers/browserprofile/browserprofile\) Terraform/\S* ` +
		regexp.QuoteMeta("Terragrunt/0.77 nightly-drift/1.4 (+https://ci.example.com) team/payments") + `$`)
	if got := h.Get("User-Agent"); !want.MatchString(got) {
		t.Errorf("User-Agent %q, want %s", got, want)
	}

	run.getenv = func(k string) string { return map[string]string{EnvAppendUserAgent: "ci\r\nX-Injected: 1"}[k] }
	run.expectDiagnostic(t, tfprotov6.DiagnosticSeverityWarning, "", "TF_APPEND_USER_AGENT left out of the User-Agent",
		`TF_APPEND_USER_AGENT is "ci\r\nX-Injected: 1"; a User-Agent holds visible ASCII characters and spaces only, so requests go without it.`)
	h, _ = srv.Header.Load().(http.Header)
	if got := h.Get("User-Agent"); strings.Contains(got, "Injected") || !strings.HasSuffix(got, " team/payments") {
		t.Errorf("User-Agent %q, want user_agent's products alone after the provider's", got)
	}
}
