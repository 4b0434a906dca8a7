package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

var (
	_ datasource.DataSource              = &ProfileDataSource{}
	_ datasource.DataSourceWithConfigure = &ProfileDataSource{}
)

// NewProfileDataSource is browserprofile_profile: GET /browsers/{profile_key}.
func NewProfileDataSource() datasource.DataSource {
	return &ProfileDataSource{}
}

// ProfileDataSource reads one profile.
type ProfileDataSource struct {
	data *providerData
}

// ProfileDataSourceModel is browserprofile_profile's state.
type ProfileDataSourceModel struct {
	ProfileKey types.String `tfsdk:"profile_key"`
	Fields     types.List   `tfsdk:"fields"`
	RawJSON    types.String `tfsdk:"raw_json"`
}

func (d *ProfileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_profile"
}

func (d *ProfileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one browser profile by its `profile_key` (`GET /browsers/{profile_key}`).",
		Attributes: map[string]schema.Attribute{
			"profile_key": schema.StringAttribute{
				MarkdownDescription: "The profile's identifier, byte for byte as the service returned it in its list " +
					"(`browserprofile_profiles`). A display name is not an identifier, and keys are specific to one environment.",
				Required:   true,
				Validators: []validator.String{profileKeyValidator{}},
			},
			"fields": fieldsAttribute("Trims `raw_json` to these members (dotted paths too) and the member holding " +
				"`profile_key`, so that the state holds only what the configuration reads. Unset, `raw_json` is the record " +
				"exactly as returned. A member the profile does not carry fails the plan."),
			"raw_json": schema.StringAttribute{
				MarkdownDescription: "The profile's record exactly as the service returned it, or trimmed to `fields`. Its " +
					"fields are not documented and may grow; read them with `jsondecode()`.",
				Computed: true,
			},
		},
	}
}

func (d *ProfileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *ProfileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var state ProfileDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || d.data == nil {
		return
	}
	defer d.data.addStoreFault(&resp.Diagnostics)
	key := state.ProfileKey.ValueString()
	ctx, tally := client.WithTally(ctx)
	defer d.data.client.LogRead(ctx, tally, map[string]any{"data_source": "browserprofile_profile", "profile_key": key})
	profile, err := d.data.client.GetProfile(ctx, key)
	if errors.Is(err, client.ErrNotFound) {
		// The list explains a 404, and holds the service's own spelling of
		// a key that Terraform handed over in Unicode NFC. It is the list
		// read once for the whole plan (client.ListProfiles); waited for
		// only so long, so that help never costs the plan its time.
		helpCtx, cancel := context.WithTimeout(ctx, d.data.client.Timeout()/helpShare)
		list, listErr := d.data.client.ListProfiles(helpCtx)
		cancel()
		spelled := ""
		if listErr == nil {
			spelled = records.ServiceSpelling(list.Profiles, key)
		}
		if spelled == "" {
			d.addNotFound(&resp.Diagnostics, key, list, err)
			return
		}
		profile, err = d.data.client.GetProfile(ctx, spelled)
	}
	if err != nil {
		d.data.addError(&resp.Diagnostics, path.Root("profile_key"), err)
		return
	}
	var fields []string
	resp.Diagnostics.Append(state.Fields.ElementsAs(ctx, &fields, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	kept, err := records.Selection{Fields: fields}.Apply([]records.Profile{profile})
	var member *records.MemberError
	if errors.As(err, &member) {
		addMemberError(&resp.Diagnostics, member, d.data.client.Redact, key)
		return
	}
	// The state keeps the key as configured: the key as returned, or its NFC
	// spelling, which is all Terraform can hold.
	state.RawJSON = types.StringValue(string(kept[0].Raw))
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// helpShare is the part of request_timeout_seconds a missing key's help
// waits for the list: beyond it, the 404 is reported without the help.
const helpShare = 4

// addNotFound explains a 404: the two known causes are a display name used
// instead of a profile_key and a key from the other environment (interface
// document, Errors). Where a listed profile has a field equal to what was
// given, it names that profile's key.
func (d *ProfileDataSource) addNotFound(diags *diag.Diagnostics, key string, list *listing.List, err error) {
	var b strings.Builder
	fmt.Fprintf(&b, "No profile has profile_key %q in the %s environment (base address %s).\n\n", key, d.data.environment, d.data.baseURL)
	if list != nil {
		if matches := records.FindByValue(list.Profiles, key); len(matches) > 0 {
			// The service's words: masked as they enter the message.
			m, redact := matches[0], d.data.client.Redact
			if m.Field == "profile_key" {
				fmt.Fprintf(&b, "Did you mean %q? Keys are matched exactly, case included.\n\n", redact(m.Key))
			} else {
				fmt.Fprintf(&b, "Did you mean %q? That profile's field %q holds the value you gave.\n\n", redact(m.Key), redact(m.Field))
			}
		}
	}
	b.WriteString("profile_key is the identifier from the service's list (data source browserprofile_profiles), " +
		"not a display name or other field, and it must be given exactly as returned.\n\n")
	fmt.Fprintf(&b, "Identifiers are environment-specific: this provider reads the %s environment, so a key copied from "+
		"the other environment is not found here. Use a provider alias configured for that environment instead.", d.data.environment)
	var re *client.RequestError
	if errors.As(err, &re) {
		b.WriteString("\n\n" + d.data.describe(re))
	}
	diags.AddAttributeError(path.Root("profile_key"), "Profile not found", b.String())
}
