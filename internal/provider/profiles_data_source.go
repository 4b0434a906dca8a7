package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

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

// ProfilesDataSourceModel documents browserprofile_profiles' state. Read
// builds the state value directly (see Read), so this struct is the schema's
// reference, kept in step by TestProfilesDataSource_stateMatchesModel.
type ProfilesDataSourceModel struct {
	Profiles    []ProfileModel `tfsdk:"profiles"`
	ProfileKeys []types.String `tfsdk:"profile_keys"`
}

// ProfileModel is one element of profiles.
type ProfileModel struct {
	ProfileKey types.String `tfsdk:"profile_key"`
	RawJSON    types.String `tfsdk:"raw_json"`
}

var profileAttrTypes = map[string]attr.Type{
	"profile_key": types.StringType,
	"raw_json":    types.StringType,
}

func (d *ProfilesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_profiles"
}

func (d *ProfilesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists every browser profile the token can see (`GET /browsers`, every page), sorted by " +
			"`profile_key` in byte order so that plans are stable whatever order the service sends. " +
			"Also a connectivity and credential check: it fails with a clear message on a wrong token or base address.",
		Attributes: map[string]schema.Attribute{
			"profiles": schema.ListNestedAttribute{
				MarkdownDescription: "Every profile, sorted by `profile_key`.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"profile_key": schema.StringAttribute{
							MarkdownDescription: "The profile's identifier, exactly as returned.",
							Computed:            true,
						},
						"raw_json": schema.StringAttribute{
							MarkdownDescription: "The profile's record exactly as returned; read it with `jsondecode()`.",
							Computed:            true,
						},
					},
				},
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

func (d *ProfilesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		return
	}
	list, err := d.data.client.ListProfiles(ctx)
	if err != nil {
		d.data.addError(&resp.Diagnostics, path.Empty(), err)
		return
	}
	for _, w := range list.Warnings {
		resp.Diagnostics.AddWarning("The profile list may be incomplete", w)
	}

	// The state is built as a tftypes value directly: with 100,000 profiles,
	// reflection through State.Set costs seconds and many times the body's
	// size in memory, and the shape is fixed by the schema above.
	stateType := resp.State.Schema.Type().TerraformType(ctx)
	profileType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"profile_key": tftypes.String, "raw_json": tftypes.String,
	}}
	profiles := make([]tftypes.Value, len(list.Profiles))
	keys := make([]tftypes.Value, len(list.Profiles))
	for i, p := range list.Profiles {
		keys[i] = tftypes.NewValue(tftypes.String, p.Key)
		profiles[i] = tftypes.NewValue(profileType, map[string]tftypes.Value{
			"profile_key": keys[i],
			"raw_json":    tftypes.NewValue(tftypes.String, string(p.Raw)),
		})
	}
	resp.State.Raw = tftypes.NewValue(stateType, map[string]tftypes.Value{
		"profiles":     tftypes.NewValue(tftypes.List{ElementType: profileType}, profiles),
		"profile_keys": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, keys),
	})
}
