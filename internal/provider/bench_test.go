package provider

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// BenchmarkProfilesRead measures one browserprofile_profiles read through
// the provider's protocol server, as Terraform drives it: the request, the
// decoding, the state value and its msgpack encoding. It is the part of
// `make bench`'s scale figure that the provider controls.
func BenchmarkProfilesRead(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv := httptest.NewServer(standin.New(standin.Options{Environments: []standin.Environment{
				{Name: "development", Token: standin.DemoDevelopmentToken, Profiles: standin.Generate(n)},
			}}))
			defer srv.Close()
			ctx := context.Background()
			server, err := NewServer("bench", "", "")()
			if err != nil {
				b.Fatal(err)
			}
			p := New("bench", "", "")()
			var ps provider.SchemaResponse
			p.Schema(ctx, provider.SchemaRequest{}, &ps)
			cfgType, ok := ps.Schema.Type().TerraformType(ctx).(tftypes.Object)
			if !ok {
				b.Fatal("the provider schema is not an object")
			}
			cfgVals := map[string]tftypes.Value{}
			for name, typ := range cfgType.AttributeTypes {
				cfgVals[name] = tftypes.NewValue(typ, nil)
			}
			cfgVals["environment"] = tftypes.NewValue(tftypes.String, "development")
			cfgVals["base_url"] = tftypes.NewValue(tftypes.String, srv.URL+"/development/api/v1")
			cfgVals["api_token"] = tftypes.NewValue(tftypes.String, standin.DemoDevelopmentToken)
			cfg, _ := tfprotov6.NewDynamicValue(cfgType, tftypes.NewValue(cfgType, cfgVals))
			if _, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
				b.Fatal(err)
			}
			conf, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &cfg})
			if err != nil || len(conf.Diagnostics) > 0 {
				b.Fatal(err, conf.Diagnostics)
			}
			var ds datasource.SchemaResponse
			NewProfilesDataSource().Schema(ctx, datasource.SchemaRequest{}, &ds)
			dsType, ok := ds.Schema.Type().TerraformType(ctx).(tftypes.Object)
			if !ok {
				b.Fatal("the data source schema is not an object")
			}
			dsVals := map[string]tftypes.Value{}
			for name, typ := range dsType.AttributeTypes {
				dsVals[name] = tftypes.NewValue(typ, nil)
			}
			dsCfg, _ := tfprotov6.NewDynamicValue(dsType, tftypes.NewValue(dsType, dsVals))

			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, err := server.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "browserprofile_profiles", Config: &dsCfg})
				if err != nil || len(resp.Diagnostics) > 0 {
					b.Fatal(err, resp.Diagnostics)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/profile")
		})
	}
}
