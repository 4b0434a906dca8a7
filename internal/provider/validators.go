package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"golang.org/x/net/http/httpguts"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
)

// These validators run at terraform validate, offline, on values known then.

// baseURLValidator applies client.ParseBaseURL's rules to base_url.
type baseURLValidator struct{}

func (baseURLValidator) Description(context.Context) string {
	return "an absolute https:// URL (http:// for loopback hosts) whose path ends in " + client.APIPathSuffix
}

func (v baseURLValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (baseURLValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := client.ParseBaseURL(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid base address",
			fmt.Sprintf("base_url %q is not usable: %s.", req.ConfigValue.ValueString(), err))
	}
}

// paceDirValidator asks for an absolute path: runs started from different
// directories must meet in one.
type paceDirValidator struct{}

func (paceDirValidator) Description(context.Context) string { return "an absolute path" }

func (v paceDirValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (paceDirValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if dir := req.ConfigValue.ValueString(); !filepath.IsAbs(dir) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid pace_dir", paceDirDetail("pace_dir", dir))
	}
}

// paceDirDetail says why a pace directory from source is refused.
func paceDirDetail(source, dir string) string {
	return fmt.Sprintf("%s is %q; it must be an absolute path, so that runs started in different directories share one.", source, dir)
}

// paceStoreValidator asks for a Redis address go-redis can use, and never
// repeats it: it may hold a password.
type paceStoreValidator struct{}

func (paceStoreValidator) Description(context.Context) string {
	return "a Redis address: redis:// or rediss://, a host, and optionally a user, a password, a port and a database"
}

func (v paceStoreValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (paceStoreValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := client.CheckPaceStore(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid pace_store", paceStoreDetail("pace_store", err))
	}
}

// paceStoreDetail says why a store's address from source is refused,
// without the address.
func paceStoreDetail(source string, err error) string {
	return fmt.Sprintf("%s is not a Redis address runs can share their pace in: %s. It takes the form "+
		"redis://[user:password@]host[:port][/db], or rediss:// for TLS (the value is not shown: it may hold a password).", source, err)
}

// profileKeyValidator refuses values that cannot be a profile_key.
type profileKeyValidator struct{}

func (profileKeyValidator) Description(context.Context) string {
	return "a profile_key as returned by the service: not empty, not . or .., no placeholder braces"
}

func (v profileKeyValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (profileKeyValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	key := req.ConfigValue.ValueString()
	err := client.CheckProfileKey(key)
	switch {
	case err == nil:
	case errors.Is(err, client.ErrKeyPlaceholder):
		resp.Diagnostics.AddAttributeError(req.Path, "Placeholder in profile_key",
			fmt.Sprintf("profile_key %q still holds the placeholder %s. A real profile_key is needed: "+
				"the identifier the service returns in its list (data source browserprofile_profiles).", key, client.Placeholder(key)))
	default:
		resp.Diagnostics.AddAttributeError(req.Path, "Not a profile_key",
			fmt.Sprintf("%q is not a profile_key: %s. Use an identifier from the list the service returns (data source browserprofile_profiles).", key, err))
	}
}

// tokenValidator catches a token with white space inside it at validate
// time. It never quotes the value.
type tokenValidator struct{}

func (tokenValidator) Description(context.Context) string {
	return "an API token: one string without white space inside it"
}

func (v tokenValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (tokenValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if strings.ContainsAny(strings.TrimSpace(req.ConfigValue.ValueString()), " \t\r\n") {
		resp.Diagnostics.AddAttributeError(req.Path, "API token contains white space", tokenWhiteSpaceDetail)
	}
}

// pagingWaysOn are the paging setting's ways to the next page, of which
// exactly one is set.
var pagingWaysOn = []string{"next_from", "page_param", "offset_param"}

// pagingValidator checks that the paging setting names exactly one way to
// the next page.
type pagingValidator struct{}

func (pagingValidator) Description(context.Context) string {
	return "exactly one of " + strings.Join(pagingWaysOn, ", ")
}

func (v pagingValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (pagingValidator) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var set []string
	for _, name := range pagingWaysOn {
		if v, ok := req.ConfigValue.Attributes()[name]; ok && !v.IsNull() {
			set = append(set, name)
		}
	}
	if len(set) == 1 {
		return
	}
	named := "none"
	if len(set) > 0 {
		named = strings.Join(set, ", ")
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid paging setting", fmt.Sprintf(
		"paging needs exactly one way to the next page, and it has %d (%s): next_from for a cursor or address that each "+
			"response holds, page_param for page numbers, or offset_param for offsets.", len(set), named))
}

// environmentValidator accepts the environments of the interface document,
// in the words the environment variable's check uses.
type environmentValidator struct{}

func (environmentValidator) Description(context.Context) string {
	return fmt.Sprintf("%q or %q", Production, Development)
}

func (v environmentValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (environmentValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if v := req.ConfigValue.ValueString(); v != Production && v != Development {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid environment", environmentDetail("environment", v))
	}
}

// environmentDetail says that what source holds is no environment.
func environmentDetail(source, value string) string {
	return fmt.Sprintf("%s is %q; it must be %q or %q.", source, value, Production, Development)
}

// memberPathValidator refuses what cannot name a member of a record: an
// empty path or segment ("proxy..country"), or placeholder braces.
type memberPathValidator struct{}

func (memberPathValidator) Description(context.Context) string {
	return `a member of the record, or a dotted path to one ("proxy.country")`
}

func (v memberPathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (memberPathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	p := req.ConfigValue.ValueString()
	switch {
	case client.Placeholder(p) != "":
		resp.Diagnostics.AddAttributeError(req.Path, "Placeholder in a member path",
			fmt.Sprintf("%q still holds the placeholder %s. A real member of the profile's record is needed, such as \"status\" or \"proxy.country\".", p, client.Placeholder(p)))
	case p == "" || slices.Contains(strings.Split(p, "."), ""):
		resp.Diagnostics.AddAttributeError(req.Path, "Not a member path",
			fmt.Sprintf("%q is not a member path: it is empty, or has an empty part between dots. Name a member of the profile's record, or a dotted path to one, such as \"status\" or \"proxy.country\".", p))
	}
}

// headersValidator refuses header names the provider sets itself, and what
// cannot be sent as a header.
type headersValidator struct{}

func (headersValidator) Description(context.Context) string {
	return "header names and values; not Authorization, Accept or User-Agent"
}

func (v headersValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (headersValidator) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for name, v := range req.ConfigValue.Elements() {
		at := req.Path.AtMapKey(name)
		switch canon := http.CanonicalHeaderKey(name); {
		case canon == "Authorization" || canon == "Accept" || canon == "User-Agent":
			resp.Diagnostics.AddAttributeError(at, "A header the provider sets itself",
				fmt.Sprintf("headers cannot set %s: the provider sends it on every request (Authorization from api_token). "+
					"Remove it; a gateway's own headers (CF-Access-Client-Id, Proxy-Authorization of a gateway, X-Api-Key) are what headers is for.", canon))
		case !httpguts.ValidHeaderFieldName(name):
			resp.Diagnostics.AddAttributeError(at, "Not a header name",
				fmt.Sprintf("%q cannot be a header's name: a name is letters, digits and !#$%%&'*+-.^_`|~, with no spaces or colons.", name))
		default:
			if s, ok := v.(types.String); ok && !s.IsUnknown() && !httpguts.ValidHeaderFieldValue(s.ValueString()) {
				// The value is a secret: say what is wrong, never what it is.
				resp.Diagnostics.AddAttributeError(at, "Not a header value",
					fmt.Sprintf("The value of header %s holds a line break or another control character, which a header cannot carry.", name))
			}
		}
	}
}
