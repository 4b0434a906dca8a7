package provider

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// BenchmarkProfilesRead measures one browserprofile_profiles read through
// the provider's protocol server, as Terraform drives it: the request, the
// decoding, the state value and its msgpack encoding. It is the part of
// `make bench`'s scale figure that the provider controls. "direct" is the
// server main.go serves (server.go answers the read itself), "framework"
// the framework's server alone; each read is a provider configured anew,
// as the list is read once per configuration.
func BenchmarkProfilesRead(b *testing.B) {
	servers := map[string]func() (tfprotov6.ProviderServer, error){
		"direct":    NewServer("bench", "", ""),
		"framework": providerserver.NewProtocol6WithError(newProvider("bench", "", "")),
	}
	for _, n := range []int{1000, 100000} {
		for _, name := range []string{"direct", "framework"} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) { benchmarkProfilesRead(b, servers[name], n) })
		}
	}
}

func benchmarkProfilesRead(b *testing.B, newServer func() (tfprotov6.ProviderServer, error), n int) {
	srv := httptest.NewServer(standin.New(standin.Options{Environments: []standin.Environment{
		{Name: "development", Token: standin.DemoDevelopmentToken, Profiles: standin.Generate(n)},
	}}))
	defer srv.Close()
	ctx := context.Background()
	server, err := newServer()
	if err != nil {
		b.Fatal(err)
	}
	var ps provider.SchemaResponse
	newProvider("bench", "", "").Schema(ctx, provider.SchemaRequest{}, &ps)
	cfg := dynamicValue(b, ps.Schema.Type().TerraformType(ctx), map[string]string{
		"environment": "development",
		"base_url":    srv.URL + "/development/api/v1",
		"api_token":   standin.DemoDevelopmentToken,
	})
	if _, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	var ds datasource.SchemaResponse
	NewProfilesDataSource().Schema(ctx, datasource.SchemaRequest{}, &ds)
	dsCfg := dynamicValue(b, ds.Schema.Type().TerraformType(ctx), nil)

	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		conf, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: cfg})
		if err != nil || len(conf.Diagnostics) > 0 {
			b.Fatal(err, conf.Diagnostics)
		}
		b.StartTimer()
		resp, err := server.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "browserprofile_profiles", Config: dsCfg})
		if err != nil || len(resp.Diagnostics) > 0 {
			b.Fatal(err, resp.Diagnostics)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/profile")
}

// dynamicValue is a configuration of the object type typ: the given string
// attributes set, every other one null.
func dynamicValue(b *testing.B, typ tftypes.Type, set map[string]string) *tfprotov6.DynamicValue {
	obj, ok := typ.(tftypes.Object)
	if !ok {
		b.Fatalf("%s is not an object type", typ)
	}
	vals := map[string]tftypes.Value{}
	for name, attrType := range obj.AttributeTypes {
		vals[name] = tftypes.NewValue(attrType, nil)
	}
	for name, v := range set {
		vals[name] = tftypes.NewValue(tftypes.String, v)
	}
	dv, err := tfprotov6.NewDynamicValue(obj, tftypes.NewValue(obj, vals))
	if err != nil {
		b.Fatal(err)
	}
	return &dv
}
