package provider

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
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
		profiles := make([]listing.Profile, n)
		keys, objs := []tftypes.Value{}, []tftypes.Value{}
		for i := range profiles {
			key := fmt.Sprintf("k%d-%s", i, strings.Repeat("é", i%40))
			raw := fmt.Sprintf(`{"profile_key": %q, "pad": %q}`, key, strings.Repeat("x", i%300))
			profiles[i] = listing.Profile{Key: key, Raw: []byte(raw)}
			k := tftypes.NewValue(tftypes.String, key)
			keys = append(keys, k)
			objs = append(objs, tftypes.NewValue(profileType, map[string]tftypes.Value{"profile_key": k, "raw_json": tftypes.NewValue(tftypes.String, raw)}))
		}
		want, err := tfprotov6.NewDynamicValue(stateType, tftypes.NewValue(stateType, map[string]tftypes.Value{
			"profile_keys": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, keys),
			"profiles":     tftypes.NewValue(tftypes.List{ElementType: profileType}, objs),
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := profilesState(profiles); !bytes.Equal(got, want.MsgPack) {
			t.Errorf("%d profiles: encodings differ", n)
		}
	}
}
