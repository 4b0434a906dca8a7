package provider

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/records"
)

// The fast path's msgpack must be what tftypes writes for the schema's type.
func TestProfilesState_matchesTftypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ds datasource.SchemaResponse
	NewProfilesDataSource().Schema(ctx, datasource.SchemaRequest{}, &ds)
	stateType := ds.Schema.Type().TerraformType(ctx)
	profileType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"profile_key": tftypes.String, "raw_json": tftypes.String}}

	for _, n := range []int{0, 1, 40, 70000} {
		profiles := make([]records.Profile, n)
		keys, objs := []tftypes.Value{}, []tftypes.Value{}
		for i := range profiles {
			key := fmt.Sprintf("k%d-%s", i, strings.Repeat("é", i%40))
			raw := fmt.Sprintf(`{"profile_key": %q, "pad": %q}`, key, strings.Repeat("x", i%300))
			profiles[i] = records.Profile{Key: key, Raw: []byte(raw)}
			k := tftypes.NewValue(tftypes.String, key)
			keys = append(keys, k)
			objs = append(objs, tftypes.NewValue(profileType, map[string]tftypes.Value{"profile_key": k, "raw_json": tftypes.NewValue(tftypes.String, raw)}))
		}
		obj, _ := stateType.(tftypes.Object)
		want, err := tfprotov6.NewDynamicValue(stateType, tftypes.NewValue(stateType, map[string]tftypes.Value{
			"fields":       tftypes.NewValue(obj.AttributeTypes["fields"], nil),
			"filter":       tftypes.NewValue(obj.AttributeTypes["filter"], nil),
			"profile_keys": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, keys),
			"profiles":     tftypes.NewValue(tftypes.List{ElementType: profileType}, objs),
		}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := profilesState(ctx, profiles, tftypes.Value{})
		if err != nil || !bytes.Equal(got, want.MsgPack) {
			t.Errorf("%d profiles: encodings differ (%v)", n, err)
		}
	}
}

// An attribute the configuration sets is copied into the state as it is;
// a computed one must have a writer, and a writer an attribute.
func TestStateWriter_derivedFromTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := schema.Schema{
		Attributes: map[string]schema.Attribute{
			"names":  schema.ListAttribute{ElementType: types.StringType, Optional: true},
			"count":  schema.Int64Attribute{Computed: true},
			"unused": schema.StringAttribute{Optional: true},
		},
		Blocks: map[string]schema.Block{
			"filter": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"field": schema.StringAttribute{Required: true},
			}}},
		},
	}
	typ, _ := s.Type().TerraformType(ctx).(tftypes.Object)
	filterType := typ.AttributeTypes["filter"]
	filterList, _ := filterType.(tftypes.List)
	filterObj := filterList.ElementType
	config := tftypes.NewValue(typ, map[string]tftypes.Value{
		"names":  tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "a")}),
		"count":  tftypes.NewValue(tftypes.Number, nil),
		"unused": tftypes.NewValue(tftypes.String, nil),
		"filter": tftypes.NewValue(filterType, []tftypes.Value{tftypes.NewValue(filterObj, map[string]tftypes.Value{"field": tftypes.NewValue(tftypes.String, "status")})}),
	})
	count := func(b []byte) []byte { return append(b, 7) } // msgpack's 7
	got, err := appendState(ctx, nil, s, map[string]appendFunc{"count": count}, config)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, map[string]tftypes.Value{
		"names":  tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "a")}),
		"count":  tftypes.NewValue(tftypes.Number, 7),
		"unused": tftypes.NewValue(tftypes.String, nil),
		"filter": tftypes.NewValue(filterType, []tftypes.Value{tftypes.NewValue(filterObj, map[string]tftypes.Value{"field": tftypes.NewValue(tftypes.String, "status")})}),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.MsgPack) {
		t.Errorf("state %x, want %x", got, want.MsgPack)
	}

	if _, err := appendState(ctx, nil, s, nil, config); err == nil || !strings.Contains(err.Error(), `computed attribute "count" has no state writer`) {
		t.Errorf("no writer for a computed attribute: %v", err)
	}
	if _, err := appendState(ctx, nil, s, map[string]appendFunc{"count": count, "gone": count}, config); err == nil || !strings.Contains(err.Error(), `"gone", which the schema does not have`) {
		t.Errorf("a writer for no attribute: %v", err)
	}
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.String}}
	if _, err := objectWriter(obj, map[string]func([]byte, int) []byte{"a": nil, "c": nil}); err == nil {
		t.Error("objectWriter took writers for other attributes than the object's")
	}
}
