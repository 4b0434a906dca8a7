package provider

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// NewServer returns the provider's protocol 6 server factory, for main.go
// and the acceptance tests alike: the framework's server, with one RPC
// answered directly. Each call makes a new provider instance, so that every
// server (every provider block, in Terraform) has its own configuration.
func NewServer(version, productionURL, developmentURL string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		return newServerFor(newProvider(version, productionURL, developmentURL))
	}
}

// newServerFor is the protocol 6 server of p.
func newServerFor(p *BrowserProfileProvider) (tfprotov6.ProviderServer, error) {
	fw, err := providerserver.NewProtocol6WithError(p)()
	if err != nil {
		return nil, err
	}
	return &server{ProviderServer: fw, provider: p}, nil
}

// server answers browserprofile_profiles' ReadDataSource itself. After a
// data source's Read, the framework converts the whole state into its own
// value types for semantic equality, compares it, copies it and walks it
// again before encoding. Only a custom type can make semantic equality
// change a value, and the list's schema has none
// (TestServer_profilesSchemaHasNoCustomTypes), so none of that work can
// change its state; the state is encoded straight from the decoded list
// instead (readState, state.go), several times faster and in a fraction of
// the memory (BenchmarkProfilesRead; the figures are in ARCHITECTURE.md).
type server struct {
	tfprotov6.ProviderServer
	provider *BrowserProfileProvider
}

func (s *server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	data := s.provider.configured.Load()
	if req.TypeName != profilesTypeName || data == nil {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}
	var config tftypes.Value
	if req.Config != nil {
		var err error
		if config, err = req.Config.Unmarshal(profilesSchema().Type().TerraformType(ctx)); err != nil {
			return nil, err
		}
	}
	state, diags := readState(ctx, data, config)
	resp := &tfprotov6.ReadDataSourceResponse{Diagnostics: toProtoDiagnostics(diags)}
	if !diags.HasError() {
		resp.State = &tfprotov6.DynamicValue{MsgPack: state}
	}
	return resp, nil
}

// toProtoDiagnostics converts readState's diagnostics, with their attribute
// paths: attribute names and list indexes, the only steps its paths take.
func toProtoDiagnostics(diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	out := make([]*tfprotov6.Diagnostic, 0, len(diags))
	for _, d := range diags {
		severity := tfprotov6.DiagnosticSeverityWarning
		if d.Severity() == diag.SeverityError {
			severity = tfprotov6.DiagnosticSeverityError
		}
		pd := &tfprotov6.Diagnostic{Severity: severity, Summary: d.Summary(), Detail: d.Detail()}
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			pd.Attribute = tftypes.NewAttributePath()
			for _, step := range dp.Path().Steps() {
				switch step := step.(type) {
				case path.PathStepAttributeName:
					pd.Attribute = pd.Attribute.WithAttributeName(string(step))
				case path.PathStepElementKeyInt:
					pd.Attribute = pd.Attribute.WithElementKeyInt(int(step))
				}
			}
		}
		out = append(out, pd)
	}
	return out
}

// configuredData is set by Configure for the fast path above.
type configuredData = atomic.Pointer[providerData]
