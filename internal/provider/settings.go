package provider

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// Environment variables, each the fallback for the attribute beside it.
// A token is valid only against its own environment's address, so the
// token and the base address have one variable per environment
// (envVar), and the generic ones serve only the environment that
// BROWSERPROFILE_ENVIRONMENT names (production when unset).
const (
	EnvAPIToken          = "BROWSERPROFILE_API_TOKEN"
	EnvEnvironment       = "BROWSERPROFILE_ENVIRONMENT"
	EnvBaseURL           = "BROWSERPROFILE_BASE_URL"
	EnvRequestsPerSecond = "BROWSERPROFILE_REQUESTS_PER_SECOND"
	EnvSharePace         = "BROWSERPROFILE_SHARE_PACE"
	EnvPaceDir           = "BROWSERPROFILE_PACE_DIR"
	EnvPaceStore         = "BROWSERPROFILE_PACE_STORE"
	// Paths of PEM files, for the attributes of the same names.
	EnvCACertFile     = "BROWSERPROFILE_CA_CERT_FILE"
	EnvClientCertFile = "BROWSERPROFILE_CLIENT_CERT_FILE"
	EnvClientKeyFile  = "BROWSERPROFILE_CLIENT_KEY_FILE"
)

// EnvAppendUserAgent is Terraform's own variable, not a fallback: wrappers
// (Terragrunt, HCP Terraform, CDKTF) set it to name themselves in the
// User-Agent, and the SDK's providers honour it. It goes before user_agent.
const EnvAppendUserAgent = "TF_APPEND_USER_AGENT"

// The bounds of requests_per_second, from the attribute or the environment.
const (
	minRequestsPerSecond = 0.1
	maxRequestsPerSecond = 10000.0
)

// envVar names an environment's own variable for a generic one:
// BROWSERPROFILE_DEVELOPMENT_API_TOKEN for BROWSERPROFILE_API_TOKEN.
func envVar(environment, generic string) string {
	return "BROWSERPROFILE_" + strings.ToUpper(environment) + "_" + strings.TrimPrefix(generic, "BROWSERPROFILE_")
}

// envLookup reads the variables one provider block may take a setting
// from: its environment's own, then the generic one where it serves that
// environment. names lists them, for messages.
type envLookup struct {
	getenv      func(string) string
	environment string
	generic     bool // the generic variables serve this environment
}

func (l envLookup) get(generic string) (value, from string) {
	if own := envVar(l.environment, generic); l.getenv(own) != "" {
		return l.getenv(own), own
	}
	if l.generic && l.getenv(generic) != "" {
		return l.getenv(generic), generic
	}
	return "", ""
}

func (l envLookup) names(generic string) string {
	if l.generic {
		return envVar(l.environment, generic) + " or " + generic
	}
	return envVar(l.environment, generic)
}

// The environments of the interface document.
const (
	Production  = "production"
	Development = "development"
)

// settings is a resolved provider block.
type settings struct {
	environment     string
	allowIncomplete bool
	client          client.Config
	// The environment variables this block reads its token and base
	// address from, for messages.
	tokenVars, baseURLVars string
	// Where the Redis store came from: pace_store or its variable.
	paceStoreSource string
	// userAgent is what follows the provider's own product in the
	// User-Agent: TF_APPEND_USER_AGENT's, then user_agent's.
	userAgent []string
}

// resolveSettings applies the precedence config value, then environment
// variable, then default, and checks what the schema validators could not:
// environment variables, unknown values, and the built-in addresses. Each
// step adds its diagnostics; one that leaves nothing to build on stops it.
func resolveSettings(cfg BrowserProfileProviderModel, getenv func(string) string, builtIn map[string]string) (settings, diag.Diagnostics) {
	var s settings
	var diags diag.Diagnostics
	if diags.Append(unknownValues(cfg)...); diags.HasError() {
		return s, diags
	}
	env, ok := s.resolveEnvironment(cfg, getenv, &diags)
	if !ok || !s.resolveBaseURL(cfg, env, builtIn, &diags) || !s.resolveToken(cfg, env, &diags) {
		return s, diags
	}
	s.resolveLimits(cfg, getenv, &diags)
	s.resolveSharing(cfg, getenv, &diags)
	resolveTLS(&s.client, cfg, getenv, &diags)
	s.client.Headers = headersFrom(cfg.Headers)
	s.resolveUserAgent(cfg, getenv, &diags)
	s.allowIncomplete = cfg.AllowIncompleteList.ValueBool()
	s.client.Paging = pagingFrom(cfg.Paging, &diags)
	return s, diags
}

// unknownValues is an error for each setting known only after apply.
func unknownValues(cfg BrowserProfileProviderModel) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, a := range []struct {
		value   attr.Value
		name    string
		envName string
	}{
		{cfg.Environment, "environment", EnvEnvironment},
		{cfg.APIToken, "api_token", EnvAPIToken},
		{cfg.BaseURL, "base_url", EnvBaseURL},
		{cfg.RequestsPerSecond, "requests_per_second", EnvRequestsPerSecond},
		{cfg.MaxRetries, "max_retries", ""},
		{cfg.MinWaitSeconds, "min_wait_seconds", ""},
		{cfg.MaxWaitSeconds, "max_wait_seconds", ""},
		{cfg.RequestTimeoutSeconds, "request_timeout_seconds", ""},
		{cfg.MaxConcurrentRequests, "max_concurrent_requests", ""},
		{cfg.MaxResponseMegabytes, "max_response_megabytes", ""},
		{cfg.AllowIncompleteList, "allow_incomplete_list", ""},
		{cfg.Paging, "paging", ""},
		{cfg.CACertPEM, "ca_cert_pem", EnvCACertFile},
		{cfg.ClientCertPEM, "client_cert_pem", EnvClientCertFile},
		{cfg.ClientKeyPEM, "client_key_pem", EnvClientKeyFile},
		{cfg.Headers, "headers", ""},
		{cfg.UserAgent, "user_agent", ""},
		{cfg.SharePace, "share_pace", EnvSharePace},
		{cfg.PaceDir, "pace_dir", EnvPaceDir},
		{cfg.PaceStore, "pace_store", EnvPaceStore},
	} {
		if !a.value.IsUnknown() {
			continue
		}
		detail := "The provider cannot be configured with a value that is known only after apply. Set " + a.name + " to a value known at plan time"
		if a.envName != "" {
			detail += ", or leave it out and set the " + a.envName + " environment variable"
		}
		diags.AddAttributeError(path.Root(a.name), "Unknown value for "+a.name, detail+".")
	}
	return diags
}

// resolveEnvironment sets the block's environment and returns where its
// environment variables are looked up.
func (s *settings) resolveEnvironment(cfg BrowserProfileProviderModel, getenv func(string) string, diags *diag.Diagnostics) (envLookup, bool) {
	defaultEnvironment := cmp.Or(getenv(EnvEnvironment), Production)
	s.environment = firstSet(cfg.Environment, defaultEnvironment, Production)
	if s.environment != Production && s.environment != Development {
		diags.AddAttributeError(path.Root("environment"), "Invalid environment", environmentDetail(EnvEnvironment, s.environment))
		return envLookup{}, false
	}
	env := envLookup{getenv: getenv, environment: s.environment, generic: s.environment == defaultEnvironment}
	s.tokenVars, s.baseURLVars = env.names(EnvAPIToken), env.names(EnvBaseURL)
	return env, true
}

// resolveBaseURL sets the base address: the block's, the environment's, or
// the build's own.
func (s *settings) resolveBaseURL(cfg BrowserProfileProviderModel, env envLookup, builtIn map[string]string, diags *diag.Diagnostics) bool {
	urlFromEnv, urlVar := env.get(EnvBaseURL)
	rawURL := firstSet(cfg.BaseURL, urlFromEnv, builtIn[s.environment])
	if rawURL == "" {
		diags.AddAttributeError(path.Root("base_url"), "No base address for the "+s.environment+" environment",
			fmt.Sprintf("This build of the provider has no built-in base address for the %s environment (a development build). "+
				"Set base_url in the provider block, or %s in the environment, to the %s environment's API address, ending in %s.",
				s.environment, s.baseURLVars, s.environment, client.APIPathSuffix))
		return false
	}
	base, err := client.ParseBaseURL(rawURL)
	if err != nil {
		source := "base_url"
		if cfg.BaseURL.IsNull() {
			source = cmp.Or(urlVar, "the built-in address of the "+s.environment+" environment")
		}
		diags.AddAttributeError(path.Root("base_url"), "Invalid base address", fmt.Sprintf("%s %q is not usable: %s.", source, rawURL, err))
		return false
	}
	s.client.BaseURL = base
	return true
}

// resolveToken sets the token, trimmed; one with white space inside fails.
func (s *settings) resolveToken(cfg BrowserProfileProviderModel, env envLookup, diags *diag.Diagnostics) bool {
	tokenFromEnv, _ := env.get(EnvAPIToken)
	token := firstSet(cfg.APIToken, tokenFromEnv, "")
	trimmed := strings.TrimSpace(token)
	switch {
	case trimmed == "":
		diags.AddAttributeError(path.Root("api_token"), "Missing API token",
			fmt.Sprintf("No API token is configured for the %s environment. Set api_token in the provider block "+
				"(from a sensitive variable), or %s in the environment, to a token created for the %s environment "+
				"in the web application under Settings, then API Tokens.", s.environment, s.tokenVars, s.environment))
		return false
	case strings.ContainsAny(trimmed, " \t\r\n"):
		diags.AddAttributeError(path.Root("api_token"), "API token contains white space", tokenWhiteSpaceDetail)
		return false
	case trimmed != token:
		diags.AddAttributeWarning(path.Root("api_token"), "API token had surrounding white space",
			"The token's leading or trailing white space (a newline from a file, say) was removed before use. "+
				"Remove it where the token is stored, or wrap the value in trimspace(), to silence this warning.")
	}
	s.client.Token = trimmed
	return true
}

// resolveLimits sets the retries, waits, deadline, concurrency, body limit
// and rate ceiling.
func (s *settings) resolveLimits(cfg BrowserProfileProviderModel, getenv func(string) string, diags *diag.Diagnostics) {
	s.client.MaxRetries = int(int64Or(cfg.MaxRetries, client.DefaultMaxRetries))
	// Unset, each is 0, which the client's defaults fill; none may be 0 when set.
	s.client.MinWait = time.Duration(int64Or(cfg.MinWaitSeconds, 0)) * time.Second
	s.client.MaxWait = time.Duration(int64Or(cfg.MaxWaitSeconds, 0)) * time.Second
	s.client.Timeout = time.Duration(int64Or(cfg.RequestTimeoutSeconds, 0)) * time.Second
	s.client.MaxConcurrent = int(int64Or(cfg.MaxConcurrentRequests, 0))
	s.client.MaxBodyBytes = int64Or(cfg.MaxResponseMegabytes, 0) << 20
	s.client = s.client.WithDefaults()
	if s.client.MinWait > s.client.MaxWait {
		diags.AddAttributeError(path.Root("min_wait_seconds"), "min_wait_seconds exceeds max_wait_seconds",
			"The least wait before retrying an outage cannot be longer than the longest wait.")
	}
	switch {
	case !cfg.RequestsPerSecond.IsNull() && !cfg.RequestsPerSecond.IsUnknown():
		s.client.RequestsPerSecond = cfg.RequestsPerSecond.ValueFloat64()
	case getenv(EnvRequestsPerSecond) != "":
		rps, err := strconv.ParseFloat(strings.TrimSpace(getenv(EnvRequestsPerSecond)), 64)
		if err != nil || rps < minRequestsPerSecond || rps > maxRequestsPerSecond {
			diags.AddAttributeError(path.Root("requests_per_second"), "Invalid "+EnvRequestsPerSecond,
				fmt.Sprintf("%s is %q; it must be a number of requests per second from %g to %g.", EnvRequestsPerSecond, getenv(EnvRequestsPerSecond), minRequestsPerSecond, maxRequestsPerSecond))
		}
		s.client.RequestsPerSecond = rps
	}
}

// resolveSharing sets whether, and where, the pace is shared with other
// runs on this machine: the block's settings, then the environment's.
func (s *settings) resolveSharing(cfg BrowserProfileProviderModel, getenv func(string) string, diags *diag.Diagnostics) {
	s.client.SharePace = true
	switch raw := strings.TrimSpace(getenv(EnvSharePace)); {
	case !cfg.SharePace.IsNull():
		s.client.SharePace = cfg.SharePace.ValueBool()
	case raw != "":
		share, err := strconv.ParseBool(raw)
		if err != nil {
			diags.AddAttributeError(path.Root("share_pace"), "Invalid "+EnvSharePace,
				fmt.Sprintf("%s is %q; it must be true or false.", EnvSharePace, getenv(EnvSharePace)))
		}
		s.client.SharePace = share
	}
	s.client.PaceDir = firstSet(cfg.PaceDir, getenv(EnvPaceDir), "")
	if dir := s.client.PaceDir; dir != "" && !filepath.IsAbs(dir) {
		source := "pace_dir"
		if cfg.PaceDir.IsNull() {
			source = EnvPaceDir
		}
		diags.AddAttributeError(path.Root("pace_dir"), "Invalid "+source, paceDirDetail(source, dir))
	}
	s.client.PaceStore = firstSet(cfg.PaceStore, strings.TrimSpace(getenv(EnvPaceStore)), "")
	s.paceStoreSource = "pace_store"
	if cfg.PaceStore.IsNull() {
		s.paceStoreSource = EnvPaceStore
	}
	if err := client.CheckPaceStore(s.client.PaceStore); s.client.PaceStore != "" && err != nil {
		diags.AddAttributeError(path.Root("pace_store"), "Invalid "+s.paceStoreSource, paceStoreDetail(s.paceStoreSource, err))
	}
}

// resolveUserAgent takes TF_APPEND_USER_AGENT, trimmed, then user_agent's
// products (checked by the schema). The variable is every provider's, set
// by tools the user may not control: one no header can carry is left out
// with a warning, rather than fail this provider's plans alone.
func (s *settings) resolveUserAgent(cfg BrowserProfileProviderModel, getenv func(string) string, diags *diag.Diagnostics) {
	if v := strings.TrimSpace(getenv(EnvAppendUserAgent)); userAgentPattern.MatchString(v) {
		s.userAgent = append(s.userAgent, v)
	} else if v != "" {
		diags.AddWarning(EnvAppendUserAgent+" left out of the User-Agent",
			fmt.Sprintf("%s is %q; a User-Agent holds visible ASCII characters and spaces only, so requests go without it.", EnvAppendUserAgent, v))
	}
	for _, e := range cfg.UserAgent.Elements() {
		if v, ok := e.(types.String); ok {
			s.userAgent = append(s.userAgent, v.ValueString())
		}
	}
}

// headersFrom is the gateway's headers, or nil when none are set.
func headersFrom(m types.Map) http.Header {
	if m.IsNull() {
		return nil
	}
	h := http.Header{}
	for name, v := range m.Elements() {
		if str, ok := v.(types.String); ok {
			h.Set(name, str.ValueString())
		}
	}
	return h
}

// pagingFrom is the paging block, or nil (the conventions) when unset.
func pagingFrom(o types.Object, diags *diag.Diagnostics) *listing.Paging {
	if o.IsNull() {
		return nil
	}
	var pm pagingModel
	diags.Append(o.As(context.Background(), &pm, basetypes.ObjectAsOptions{})...)
	return &listing.Paging{
		NextFrom:      pm.NextFrom.ValueString(),
		NextParam:     pm.NextParam.ValueString(),
		PageParam:     pm.PageParam.ValueString(),
		FirstPage:     int(int64Or(pm.FirstPage, 1)),
		OffsetParam:   pm.OffsetParam.ValueString(),
		PageSizeParam: pm.PageSizeParam.ValueString(),
		PageSize:      int(pm.PageSize.ValueInt64()),
		TotalFrom:     pm.TotalFrom.ValueString(),
	}
}

const tokenWhiteSpaceDetail = "The API token has white space inside it. A token is one unbroken string: " +
	"was the token copied whole? Do not include a \"Bearer \" prefix; the provider adds the Authorization scheme itself."

// firstSet returns the configured value if set, else the environment
// variable's, else def. A value in the block wins, so aliased providers
// never borrow each other's settings from the environment.
func firstSet(v types.String, fromEnv, def string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	if fromEnv != "" {
		return fromEnv
	}
	return def
}

func int64Or(v types.Int64, def int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueInt64()
}
