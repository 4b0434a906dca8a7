package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// profilesTypeName is the list data source's type name.
const profilesTypeName = "browserprofile_profiles"

var (
	_ datasource.DataSource              = &ProfilesDataSource{}
	_ datasource.DataSourceWithConfigure = &ProfilesDataSource{}
)

// NewProfilesDataSource is browserprofile_profiles: GET /browsers, every page.
func NewProfilesDataSource() datasource.DataSource {
	return &ProfilesDataSource{}
}

// ProfilesDataSource lists every profile the token can see.
type ProfilesDataSource struct {
	data *providerData
}

func (d *ProfilesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = profilesTypeName
}

func (d *ProfilesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = profilesSchema()
}

func profilesSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Lists every browser profile the token can see (`GET /browsers`, every page), sorted by " +
			"`profile_key` in byte order so that plans are stable whatever order the service sends. " +
			"Also a connectivity and credential check: it fails with a clear message on a wrong token or base address.",
		Attributes: map[string]schema.Attribute{
			// A list of an object type, not a list nested attribute: the value
			// is the same, and Terraform's mock_provider can fill only the
			// former with a list of objects written in a test (terraform#38369).
			"profiles": schema.ListAttribute{
				MarkdownDescription: "Every profile, sorted by `profile_key`: objects of `profile_key`, the profile's identifier " +
					"exactly as returned, and `raw_json`, the profile's record exactly as returned (read it with `jsondecode()`).",
				ElementType: types.ObjectType{AttrTypes: map[string]attr.Type{"profile_key": types.StringType, "raw_json": types.StringType}},
				Computed:    true,
			},
			"profile_keys": schema.ListAttribute{
				MarkdownDescription: "The same keys in the same order, to feed other infrastructure: " +
					"`for_each = toset(data.browserprofile_profiles.all.profile_keys)`.",
				ElementType: types.StringType,
				Computed:    true,
			},
		},
	}
}

func (d *ProfilesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// Read is the framework's path to the state, which server.go takes for
// every other data source; for this one it answers directly, with the same
// readState.
func (d *ProfilesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		return
	}
	state, diags := readState(ctx, d.data, req.Config.Raw)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	raw, err := (&tfprotov6.DynamicValue{MsgPack: state}).Unmarshal(resp.State.Schema.Type().TerraformType(ctx))
	if err != nil {
		resp.Diagnostics.AddError("Encoding the profile list failed", "This is a bug in the provider; please report it: "+err.Error())
		return
	}
	resp.State.Raw = raw
}

// readState lists the profiles, with the list's warnings, and returns the
// state in msgpack, for Read and for the protocol server (server.go).
func readState(ctx context.Context, data *providerData, config tftypes.Value) (state []byte, diags diag.Diagnostics) {
	list, err := data.client.ListProfiles(ctx)
	if err != nil {
		data.addError(&diags, path.Empty(), err)
		return nil, diags
	}
	if inc := list.Incomplete; inc != nil {
		data.addIncomplete(&diags, inc)
		if diags.HasError() {
			return nil, diags
		}
	}
	for _, w := range list.Warnings {
		diags.AddWarning("The service's profile list needs attention", w)
	}
	state, err = profilesState(ctx, list.Profiles, config)
	if err != nil {
		diags.AddError("Encoding the profile list failed", "This is a bug in the provider; please report it: "+err.Error())
		return nil, diags
	}
	return state, diags
}

// profilesState writes the state of browserprofile_profiles for the
// profiles: profile_keys and profiles from them, without a copy of any
// record, and whatever the configuration sets from it (state.go).
func profilesState(ctx context.Context, profiles []listing.Profile, config tftypes.Value) ([]byte, error) {
	s := profilesSchema()
	list, _ := s.Attributes["profiles"].GetType().TerraformType(ctx).(tftypes.List)
	objType, _ := list.ElementType.(tftypes.Object)
	profile, err := objectWriter(objType, map[string]func([]byte, listing.Profile) []byte{
		"profile_key": func(b []byte, p listing.Profile) []byte { return msgpackStr(b, p.Key) },
		"raw_json":    func(b []byte, p listing.Profile) []byte { return msgpackStr(b, p.Raw) },
	})
	if err != nil {
		return nil, err
	}
	size := 64
	for _, p := range profiles {
		size += 2*len(p.Key) + len(p.Raw) + 40
	}
	return appendState(ctx, make([]byte, 0, size), s, map[string]appendFunc{
		"profile_keys": func(b []byte) []byte {
			b = msgpackArrayLen(b, len(profiles))
			for _, p := range profiles {
				b = msgpackStr(b, p.Key)
			}
			return b
		},
		"profiles": func(b []byte) []byte {
			b = msgpackArrayLen(b, len(profiles))
			for _, p := range profiles {
				b = profile(b, p)
			}
			return b
		},
	}, config)
}
