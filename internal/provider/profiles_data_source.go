package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

// profilesTypeName is the list data source's type name.
const profilesTypeName = "browserprofile_profiles"

var (
	_ datasource.DataSource                   = &ProfilesDataSource{}
	_ datasource.DataSourceWithConfigure      = &ProfilesDataSource{}
	_ datasource.DataSourceWithValidateConfig = &ProfilesDataSource{}
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
			"`profile_key` in byte order so that plans are stable whatever order the service sends; `filter` keeps some of " +
			"them and `fields` trims their records, after the whole list is read and checked. " +
			"Also a connectivity and credential check: it fails with a clear message on a wrong token or base address.",
		Blocks: map[string]schema.Block{
			"filter": schema.ListNestedBlock{
				MarkdownDescription: "Keeps the profiles whose member `field` holds one of `values`. Every `filter` block " +
					"must match; any value in a block may. A string matches by value, a number or boolean by its JSON text " +
					"(`\"3\"`, `\"true\"`), an array when one of its elements does; an object, `null` or a missing member " +
					"matches nothing. A `field` that no profile in the list carries fails the plan, naming the members " +
					"the records do carry, rather than keep no profile.",
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"field": schema.StringAttribute{
						MarkdownDescription: "A member of the profile's record, or a dotted path to one (`proxy.country`), " +
							"read where `profile_key` is read: at the record's top, or in a JSON:API record's `attributes`.",
						Required:   true,
						Validators: []validator.String{memberPathValidator{}},
					},
					"values": schema.ListAttribute{
						MarkdownDescription: "The values that match; at least one.",
						ElementType:         types.StringType,
						Required:            true,
						Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
					},
				}},
			},
		},
		Attributes: map[string]schema.Attribute{
			"fields": fieldsAttribute("Trims each profile's `raw_json` to these members (dotted paths too) and the member " +
				"holding its `profile_key`, to keep the state small. Unset, `raw_json` is the record exactly as returned. " +
				"A member no profile in the list carries fails the plan."),
			// A list of an object type, not a list nested attribute: the value
			// is the same, and Terraform's mock_provider can fill only the
			// former with a list of objects written in a test (terraform#38369).
			"profiles": schema.ListAttribute{
				MarkdownDescription: "Every profile (those `filter` keeps), sorted by `profile_key`: objects of `profile_key`, the " +
					"profile's identifier exactly as returned, and `raw_json`, the profile's record exactly as returned, or trimmed " +
					"to `fields` (read it with `jsondecode()`).",
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

// fieldsAttribute is the optional list of member paths a record is
// trimmed to, in both data sources.
func fieldsAttribute(description string) schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: description,
		ElementType:         types.StringType,
		Optional:            true,
		Validators: []validator.List{
			listvalidator.SizeAtLeast(1),
			listvalidator.UniqueValues(),
			listvalidator.ValueStringsAre(memberPathValidator{}),
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

// readState lists the profiles, with the list's warnings, keeps those the
// configuration's filter and fields select, and returns the state in
// msgpack, for Read and for the protocol server (server.go).
func readState(ctx context.Context, data *providerData, config tftypes.Value) (state []byte, diags diag.Diagnostics) {
	defer data.addStoreFault(&diags)
	ctx, tally := client.WithTally(ctx)
	defer data.client.LogRead(ctx, tally, map[string]any{"data_source": "browserprofile_profiles"})
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
	sel, err := selectionFrom(config)
	if err != nil {
		diags.AddError("Reading the configuration failed", "This is a bug in the provider; please report it: "+err.Error())
		return nil, diags
	}
	kept, err := sel.Apply(list.Profiles)
	var member *records.MemberError
	if errors.As(err, &member) {
		addMemberError(&diags, member, data.client.Redact, "")
		return nil, diags
	}
	state, err = profilesState(ctx, kept, config)
	if err != nil {
		diags.AddError("Encoding the profile list failed", "This is a bug in the provider; please report it: "+err.Error())
		return nil, diags
	}
	return state, diags
}

// profilesState writes the state of browserprofile_profiles for the
// profiles: profile_keys and profiles from them, without a copy of any
// record, and whatever the configuration sets from it (state.go).
func profilesState(ctx context.Context, profiles []records.Profile, config tftypes.Value) ([]byte, error) {
	s := profilesSchema()
	list, _ := s.Attributes["profiles"].GetType().TerraformType(ctx).(tftypes.List)
	objType, _ := list.ElementType.(tftypes.Object)
	profile, err := objectWriter(objType, map[string]func([]byte, records.Profile) []byte{
		"profile_key": func(b []byte, p records.Profile) []byte { return msgpackStr(b, p.Key) },
		"raw_json":    func(b []byte, p records.Profile) []byte { return msgpackStr(b, p.Raw) },
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

// ValidateConfig refuses two filter blocks on one field, at validate: they
// would read as "any of these values", and mean "both".
func (d *ProfilesDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var filters []filterModel
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("filter"), &filters)...)
	seen := map[string]int{}
	for i, f := range filters {
		if f.Field.IsNull() || f.Field.IsUnknown() {
			continue
		}
		if first, ok := seen[f.Field.ValueString()]; ok {
			resp.Diagnostics.AddAttributeError(path.Root("filter").AtListIndex(i).AtName("field"), "The same field in two filter blocks",
				fmt.Sprintf("filter blocks %d and %d both name %q. Every filter block must match, so two on one field keep only "+
					"the profiles that hold a value of each; put every value that may match in one block's values.", first, i, f.Field.ValueString()))
			continue
		}
		seen[f.Field.ValueString()] = i
	}
}

// filterModel is one filter block.
type filterModel struct {
	Field  types.String `tfsdk:"field"`
	Values types.List   `tfsdk:"values"`
}

// selectionFrom reads filter and fields from the data source's
// configuration.
func selectionFrom(config tftypes.Value) (records.Selection, error) {
	var sel records.Selection
	if config.IsNull() || !config.IsKnown() {
		return sel, nil
	}
	var attrs map[string]tftypes.Value
	if err := config.As(&attrs); err != nil {
		return sel, err
	}
	var blocks []tftypes.Value
	if err := attrs["filter"].As(&blocks); err != nil {
		return sel, err
	}
	for _, b := range blocks {
		var f map[string]tftypes.Value
		if err := b.As(&f); err != nil {
			return sel, err
		}
		var field string
		if err := f["field"].As(&field); err != nil {
			return sel, err
		}
		values, err := stringsOf(f["values"])
		if err != nil {
			return sel, err
		}
		sel.Filters = append(sel.Filters, records.Filter{Field: field, Values: values})
	}
	var err error
	sel.Fields, err = stringsOf(attrs["fields"])
	return sel, err
}

// stringsOf reads a list of strings; a null list is none.
func stringsOf(v tftypes.Value) ([]string, error) {
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if err := e.As(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addMemberError says which argument names a member the records do not
// carry, what they do carry, and why no shorter result is given instead:
// the list's when key is "", else the one profile's of that key. The
// members quoted come from the service.
func addMemberError(diags *diag.Diagnostics, e *records.MemberError, redact func(string) string, key string) {
	at, where := path.Root("fields").AtListIndex(e.Index), fmt.Sprintf("fields[%d]", e.Index)
	if e.Argument == "filter" {
		at, where = path.Root("filter").AtListIndex(e.Index).AtName("field"), fmt.Sprintf("filter[%d].field", e.Index)
	}
	summary, carry, why := "No profile has the member "+strconv.Quote(e.Member), "The records carry",
		"This fails rather than keep no profile: an empty list fed to for_each destroys every resource keyed by it on the next apply."
	var b strings.Builder
	if key == "" {
		fmt.Fprintf(&b, "%s names %q, which none of the %d profiles in the list carries.", where, e.Member, e.Profiles)
	} else {
		summary, carry = "The profile has no member "+strconv.Quote(e.Member), "The record carries"
		why = "This fails rather than store the record without it, so that the plan names the member here, " +
			"not at the jsondecode() that reads it."
		fmt.Fprintf(&b, "%s names %q, which the profile %q does not carry.", where, e.Member, key)
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " Did you mean %q?", redact(e.Suggestion))
	}
	carried := e.Carried
	if len(carried) > 30 {
		carried = carried[:30]
	}
	quoted := make([]string, len(carried))
	for i, c := range carried {
		quoted[i] = redact(strconv.Quote(c))
	}
	fmt.Fprintf(&b, "\n\n%s: %s", carry, strings.Join(quoted, ", "))
	if len(e.Carried) > len(carried) {
		fmt.Fprintf(&b, ", and %d more", len(e.Carried)-len(carried))
	}
	b.WriteString(".\n\n" + why + " A member is read at the record's top, or in a JSON:API record's attributes; " +
		"a dotted path reaches into objects.")
	diags.AddAttributeError(at, summary, b.String())
}
