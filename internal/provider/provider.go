// Package provider is the Terraform-facing side: schema, configuration and
// diagnostics. It talks HTTP only through internal/client.
package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
)

var _ provider.Provider = &BrowserProfileProvider{}

// BrowserProfileProvider is the browserprofile provider.
type BrowserProfileProvider struct {
	version string
	// builtIn maps an environment to the base address this build was
	// released with (set through -ldflags -X from .goreleaser.yml); empty in
	// a development build.
	builtIn map[string]string
	// getenv reads the environment's settings: os.Getenv, or a test's own.
	getenv func(string) string
	// configured is what Configure produced, for server.ReadDataSource.
	configured configuredData
}

// BrowserProfileProviderModel is the provider block.
type BrowserProfileProviderModel struct {
	Environment           types.String  `tfsdk:"environment"`
	APIToken              types.String  `tfsdk:"api_token"`
	BaseURL               types.String  `tfsdk:"base_url"`
	MaxRetries            types.Int64   `tfsdk:"max_retries"`
	MinWaitSeconds        types.Int64   `tfsdk:"min_wait_seconds"`
	MaxWaitSeconds        types.Int64   `tfsdk:"max_wait_seconds"`
	RequestTimeoutSeconds types.Int64   `tfsdk:"request_timeout_seconds"`
	MaxConcurrentRequests types.Int64   `tfsdk:"max_concurrent_requests"`
	MaxResponseMegabytes  types.Int64   `tfsdk:"max_response_megabytes"`
	RequestsPerSecond     types.Float64 `tfsdk:"requests_per_second"`
	AllowIncompleteList   types.Bool    `tfsdk:"allow_incomplete_list"`
	Paging                types.Object  `tfsdk:"paging"`
	CACertPEM             types.String  `tfsdk:"ca_cert_pem"`
	ClientCertPEM         types.String  `tfsdk:"client_cert_pem"`
	ClientKeyPEM          types.String  `tfsdk:"client_key_pem"`
	Headers               types.Map     `tfsdk:"headers"`
	SharePace             types.Bool    `tfsdk:"share_pace"`
	PaceDir               types.String  `tfsdk:"pace_dir"`
	PaceStore             types.String  `tfsdk:"pace_store"`
	UserAgent             types.List    `tfsdk:"user_agent"`
}

// pagingModel is the provider block's paging setting.
type pagingModel struct {
	NextFrom      types.String `tfsdk:"next_from"`
	NextParam     types.String `tfsdk:"next_param"`
	PageParam     types.String `tfsdk:"page_param"`
	FirstPage     types.Int64  `tfsdk:"first_page"`
	OffsetParam   types.String `tfsdk:"offset_param"`
	PageSizeParam types.String `tfsdk:"page_size_param"`
	PageSize      types.Int64  `tfsdk:"page_size"`
	TotalFrom     types.String `tfsdk:"total_from"`
}

// newProvider is the provider with its version and built-in base addresses
// (productionURL, developmentURL); NewServer serves one per provider block.
func newProvider(version, productionURL, developmentURL string) *BrowserProfileProvider {
	return &BrowserProfileProvider{
		version: version,
		builtIn: map[string]string{Production: productionURL, Development: developmentURL},
		getenv:  os.Getenv,
	}
}

func (p *BrowserProfileProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "browserprofile"
	resp.Version = p.version
}

func (p *BrowserProfileProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads browser profiles from the browser profile service. " +
			"Each provider block addresses one environment with one token; use aliases for several environments.",
		Attributes: map[string]schema.Attribute{
			"environment": schema.StringAttribute{
				MarkdownDescription: "The service environment: `production` (default) or `development`. " +
					"Each environment has its own base address, tokens and profile keys. " +
					"Falls back to the `" + EnvEnvironment + "` environment variable.",
				Optional:   true,
				Validators: []validator.String{environmentValidator{}},
			},
			"api_token": schema.StringAttribute{
				MarkdownDescription: "API token for the chosen environment, created in the web application under " +
					"Settings, then API Tokens. Treat it like a password: pass it from a sensitive variable. " +
					"Falls back to the environment's own variable, `BROWSERPROFILE_PRODUCTION_API_TOKEN` or `BROWSERPROFILE_DEVELOPMENT_API_TOKEN`, " +
					"then to `" + EnvAPIToken + "` when the block's environment is the one `" + EnvEnvironment + "` names (production when unset). " +
					"Surrounding white space is trimmed with a warning.",
				Optional:   true,
				Sensitive:  true,
				Validators: []validator.String{tokenValidator{}},
			},
			"base_url": schema.StringAttribute{
				MarkdownDescription: "Overrides the environment's built-in API address. An absolute URL whose path ends in `/api/v1`; " +
					"`https://`, or `http://` for loopback hosts only. Falls back to `BROWSERPROFILE_PRODUCTION_BASE_URL` or " +
					"`BROWSERPROFILE_DEVELOPMENT_BASE_URL`, then to `" + EnvBaseURL + "`, as `api_token` does.",
				Optional:   true,
				Validators: []validator.String{baseURLValidator{}},
			},
			"ca_cert_pem": schema.StringAttribute{
				MarkdownDescription: "A private certificate authority's certificate(s), PEM (`file(\"corp-ca.pem\")`), trusted besides this " +
					"machine's own roots, never instead of them: for a service, gateway or TLS-inspecting proxy whose certificate it issued. " +
					"Falls back to the file the `" + EnvCACertFile + "` environment variable names.",
				Optional: true,
			},
			"client_cert_pem": schema.StringAttribute{
				MarkdownDescription: "A client certificate, PEM, for a service or gateway that requires one (mutual TLS); with `client_key_pem`. " +
					"Falls back to the file `" + EnvClientCertFile + "` names.",
				Optional: true,
			},
			"client_key_pem": schema.StringAttribute{
				MarkdownDescription: "The client certificate's private key, PEM. Falls back to the file `" + EnvClientKeyFile + "` names.",
				Optional:            true,
				Sensitive:           true,
			},
			"headers": schema.MapAttribute{
				MarkdownDescription: "Headers sent with every request to the base address's scheme, host and port, and nowhere else: " +
					"an access gateway's (Cloudflare Access, IAP). Their values are secrets, kept out of messages and logs. They cannot " +
					"replace `Authorization`, `Accept` or `User-Agent`.",
				ElementType: types.StringType,
				Optional:    true,
				Sensitive:   true,
				Validators:  []validator.Map{headersValidator{}},
			},
			"user_agent": schema.ListAttribute{
				MarkdownDescription: "Products appended to the User-Agent of every request, after the provider's own and " +
					"what the `" + EnvAppendUserAgent + "` environment variable holds, so that the service's logs tell one " +
					"workload from another: `[\"nightly-drift/1.4 (+https://ci.example.com)\"]`. Visible ASCII characters and " +
					"spaces, at most 256 each.",
				ElementType: types.StringType,
				Optional:    true,
				Validators: []validator.List{listvalidator.ValueStringsAre(
					stringvalidator.LengthAtMost(256),
					stringvalidator.RegexMatches(userAgentPattern, "visible ASCII characters, with spaces only between them"),
				)},
			},
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("How many times a request is retried after a rate limit (429, or a 403 with `Retry-After` or a rate-limit header saying none remain), "+
					"a gateway error (502, 503, 504) or a dropped connection. A rate limit that does not say when to come back is retried as soon as the provider's pace lets it go, "+
					"and each such retry counts a quarter (so %d of them by default). Default `%d`; `0` disables retries.", client.RefusalsPerRetry*client.DefaultMaxRetries, client.DefaultMaxRetries),
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(0, 20)},
			},
			"min_wait_seconds": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("The least wait before retrying a gateway error (502, 503, 504) or a dropped connection. The wait after the first attempt is drawn between this and twice this, "+
					"and each later one between a base that doubles per attempt and twice that base, all capped at `max_wait_seconds`. "+
					"A `Retry-After` shorter than this waits this long. A rate limit that does not say when to come back waits for no back-off: "+
					"the provider has already slowed its pace for it. Default `%d`.", int(client.DefaultMinWait.Seconds())),
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, 300)},
			},
			"max_wait_seconds": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("The longest single wait: between attempts, for a `Retry-After`, or for a rate limit's reset. "+
					"A service asking for a longer wait fails the read at once, saying when to try again, instead of stalling the plan. Default `%d`.", int(client.DefaultMaxWait.Seconds())),
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, 3600)},
			},
			"request_timeout_seconds": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("The overall deadline of one read, retries and pages included. Default `%d`.", int(client.DefaultTimeout.Seconds())),
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, 3600)},
			},
			"max_response_megabytes": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("The largest response body the provider reads (a list's pages count together), and the "+
					"memory budget the reads in flight of this provider block share: a body that would go past it is refused with an error "+
					"that names this setting, holding at most this much memory. Default `%d`.", client.DefaultMaxBodyBytes>>20),
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, 4096)},
			},
			"max_concurrent_requests": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("The most requests this provider block has in flight at once. Default `%d`.", client.DefaultMaxConcurrent),
				Optional:            true,
				Validators:          []validator.Int64{int64validator.Between(1, 64)},
			},
			"requests_per_second": schema.Float64Attribute{
				MarkdownDescription: "A ceiling on the request rate. Unset, the provider paces itself by the service's " +
					"`429` answers. Runs that share their pace (`share_pace`) keep one pace: give them the same ceiling. Runs on " +
					"several machines share nothing: give each its part of the service's limit. Falls back to the `" +
					EnvRequestsPerSecond + "` environment variable.",
				Optional:   true,
				Validators: []validator.Float64{float64validator.Between(minRequestsPerSecond, maxRequestsPerSecond)},
			},
			"share_pace": schema.BoolAttribute{
				MarkdownDescription: "Pace together with the other runs of this provider that use the same `base_url` and " +
					"token (Terragrunt's `run-all`, Atlantis, a CI matrix): they share what they learn of the service's rate limit, " +
					"a pause it asked for, an announced quota and the requests in flight, through state in `pace_dir` on this " +
					"machine, or in the Redis `pace_store` names on any number of machines, so that together they stay within the " +
					"limit as one client would. The state holds no secret. " +
					"A directory that cannot be used leaves each run at its own pace, with a debug log line. Default `true`. Falls " +
					"back to the `" + EnvSharePace + "` environment variable (`true` or `false`).",
				Optional: true,
			},
			"pace_dir": schema.StringAttribute{
				MarkdownDescription: "An absolute path: the directory where runs share their pace (`share_pace`). Default " +
					"`terraform-provider-browserprofile/pace` under the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache` on " +
					"Linux, `~/Library/Caches` on macOS, `%LocalAppData%` on Windows). It must be the user's own: owned by the " +
					"user and writable by nobody else, under parents that are the user's or root's (or sticky, as `/tmp`); " +
					"another is not used, and each run paces alone. Falls back to the `" + EnvPaceDir + "` environment variable.",
				Optional:   true,
				Validators: []validator.String{paceDirValidator{}},
			},
			"pace_store": schema.StringAttribute{
				MarkdownDescription: "A Redis (or Valkey) server where runs on any number of machines share their pace " +
					"(`share_pace`), instead of `pace_dir`: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS, " +
					"verified against the system's roots and `ca_cert_pem`. Runs with the same `base_url` and token meet there; " +
					"Redis holds no secret (the state's name is a slow hash of the token), and every key expires an hour after " +
					"its last use. A Redis that does not answer within a quarter of a second leaves each run at its share of the pace, " +
					"with a debug log line, and is asked again after a second, then up to thirty; one that can never work as set " +
					"(the password refused, a command or database the user may not use, a certificate not trusted) is also a " +
					"warning on the plan's output, once per run. Falls back to the `" +
					EnvPaceStore + "` environment variable.",
				Optional:   true,
				Sensitive:  true,
				Validators: []validator.String{paceStoreValidator{}},
			},
			"allow_incomplete_list": schema.BoolAttribute{
				MarkdownDescription: "Accept a profile list that may be incomplete, with a warning, instead of failing. " +
					"By default, when the service claims more profiles than it lets the provider read (a total larger than what " +
					"arrived, `has_more` with no way to reach more, pages that stop making progress, a next page on another host, " +
					"or the page limit), `browserprofile_profiles` fails the plan: `profile_keys` usually feeds `for_each`, and a " +
					"short list destroys the resources of every missing profile on the next apply. Set this to `true` only where a " +
					"partial list is harmless. Default `false`.",
				Optional: true,
			},
			"paging": schema.SingleNestedAttribute{
				MarkdownDescription: "Describes how the service pages its list, for a service that follows none of the conventions " +
					"the provider recognises (see the provider's documentation): set exactly one of `next_from`, `page_param` and " +
					"`offset_param`. It says only how to reach the next page: totals, page counts and `has_more` are still read and " +
					"checked, and a list that ends short of them is an error.",
				Optional:   true,
				Attributes: pagingAttributes(),
				Validators: []validator.Object{pagingValidator{}},
			},
		},
	}
}

// pagingAttributes are the fields of the paging setting.
func pagingAttributes() map[string]schema.Attribute {
	sibling := func(name string) path.Expression { return path.MatchRelative().AtParent().AtName(name) }
	param := stringvalidator.RegexMatches(paramPattern, "a query parameter name")
	return map[string]schema.Attribute{
		"next_from": schema.StringAttribute{
			MarkdownDescription: "Where each response holds the next page's cursor or address: a dot-separated path of " +
				"fields in the JSON body (`meta.next_cursor`), or `header:` and a header's name (`header:X-Next-Cursor`); " +
				"`header:Link` is the `Link` header's `rel=\"next\"` target. When the value there is missing, `null`, `false` " +
				"or empty, the list ends, unless the page claims more.",
			Optional: true,
			Validators: []validator.String{
				stringvalidator.RegexMatches(locationPattern, "a dot-separated path of JSON field names, such as meta.next_cursor, or header:<Name>"),
			},
		},
		"next_param": schema.StringAttribute{
			MarkdownDescription: "With `next_from`: the request parameter that carries the cursor back (`cursor`, `after`, `pageToken`). " +
				"Leave it out when `next_from` holds the next page's address, which is then requested as it is.",
			Optional: true,
			Validators: []validator.String{
				param,
				stringvalidator.AlsoRequires(sibling("next_from")),
			},
		},
		"page_param": schema.StringAttribute{
			MarkdownDescription: "The request parameter of a page number (`page`, `_page`), sent on every request, the first " +
				"included. Paging ends at the total or page count the service claims, at an empty page, or at a page shorter than `page_size`.",
			Optional:   true,
			Validators: []validator.String{param},
		},
		"first_page": schema.Int64Attribute{
			MarkdownDescription: "With `page_param`: the number of the first page, `0` or `1`. Default `1`.",
			Optional:            true,
			Validators: []validator.Int64{
				int64validator.Between(0, 1),
				int64validator.AlsoRequires(sibling("page_param")),
			},
		},
		"offset_param": schema.StringAttribute{
			MarkdownDescription: "The request parameter of an offset (`offset`, `skip`): `0` on the first request, then the " +
				"number of records received so far. Paging ends as with `page_param`.",
			Optional:   true,
			Validators: []validator.String{param},
		},
		"page_size_param": schema.StringAttribute{
			MarkdownDescription: "The request parameter that sets the page size (`limit`, `per_page`). Set with `page_size`.",
			Optional:            true,
			Validators: []validator.String{
				param,
				stringvalidator.AlsoRequires(sibling("page_size")),
			},
		},
		"page_size": schema.Int64Attribute{
			MarkdownDescription: "The page size to ask for. Set with `page_size_param`.",
			Optional:            true,
			Validators: []validator.Int64{
				int64validator.Between(1, 100000),
				int64validator.AlsoRequires(sibling("page_size_param")),
			},
		},
		"total_from": schema.StringAttribute{
			MarkdownDescription: "Where each response holds the number of profiles in all, for a service that names it in no " +
				"conventional way (`X-Total-Count`, `total`, `totalCount`, `allProfilesCount` and the like are read without it); " +
				"in the form of `next_from`.",
			Optional:   true,
			Validators: []validator.String{stringvalidator.RegexMatches(locationPattern, "a dot-separated path of JSON field names, or header:<Name>")},
		},
	}
}

var (
	locationPattern = regexp.MustCompile(`^(header:[A-Za-z0-9!#$%&'*+.^_|~-]+|[^.\s]+(\.[^.\s]+)*)$`)
	paramPattern    = regexp.MustCompile(`^[A-Za-z0-9_.~\-\[\]$]+$`)
	// userAgentPattern is what one product of user_agent, or
	// TF_APPEND_USER_AGENT, may hold: visible ASCII, spaces within.
	userAgentPattern = regexp.MustCompile(`^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$`)
)

func (p *BrowserProfileProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg BrowserProfileProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings, diags := resolveSettings(cfg, p.getenv, p.builtIn)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings.client.UserAgent = strings.Join(append([]string{fmt.Sprintf(
		"terraform-provider-browserprofile/%s (+https://registry.terraform.io/providers/browserprofile/browserprofile) Terraform/%s",
		p.version, req.TerraformVersion)}, settings.userAgent...), " ")
	c, err := client.New(settings.client)
	if err != nil {
		resp.Diagnostics.AddError("Invalid provider configuration", err.Error())
		return
	}
	tflog.Info(ctx, "configured browserprofile provider", map[string]any{
		"environment": settings.environment, "base_url": c.BaseURL(),
	})
	data := &providerData{client: c, environment: settings.environment, baseURL: c.BaseURL(), allowIncomplete: settings.allowIncomplete,
		pagingSet: settings.client.Paging != nil, maxResponseMB: settings.client.MaxBodyBytes >> 20,
		tokenVars: settings.tokenVars, baseURLVars: settings.baseURLVars, paceStoreSource: settings.paceStoreSource}
	resp.DataSourceData = data
	p.configured.Store(data)
}

func (p *BrowserProfileProvider) Resources(context.Context) []func() resource.Resource {
	return nil
}

func (p *BrowserProfileProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewProfileDataSource, NewProfilesDataSource}
}

// providerData is what Configure hands to the data sources.
type providerData struct {
	client          *client.Client
	environment     string
	baseURL         string
	allowIncomplete bool
	pagingSet       bool
	maxResponseMB   int64
	// The environment variables the block's token and base address may
	// come from, for advice.
	tokenVars, baseURLVars string
	// Where the Redis pace_store came from: the attribute or its
	// environment variable, for messages.
	paceStoreSource string
}
