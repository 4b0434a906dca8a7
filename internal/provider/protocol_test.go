package provider

import (
	"cmp"
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The RPCs Terraform makes for a plan that reads a data source, served
// in-process by the provider's own server (NewServer, as main.go serves
// it), with no Terraform binary: the schema, the provider's configuration,
// then the read. A plain `go test` checks every message this way; the
// acceptance tests check the same through Terraform.

// unknown stands for a value known only after apply.
var unknown = struct{}{}

// protoValue is v as a value of typ: a string, int, float64, bool, unknown,
// []any, or map[string]any (a map, or an object whose other attributes are
// null); nil is null.
func protoValue(t *testing.T, typ tftypes.Type, v any) tftypes.Value {
	t.Helper()
	switch v := v.(type) {
	case nil:
		return tftypes.NewValue(typ, nil)
	case struct{}:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case int:
		return tftypes.NewValue(typ, new(big.Float).SetInt64(int64(v)))
	case float64:
		return tftypes.NewValue(typ, new(big.Float).SetFloat64(v))
	case []any:
		list, ok := typ.(tftypes.List)
		if !ok {
			t.Fatalf("a list for %s", typ)
		}
		vals := make([]tftypes.Value, len(v))
		for i, e := range v {
			vals[i] = protoValue(t, list.ElementType, e)
		}
		return tftypes.NewValue(typ, vals)
	case map[string]any:
		vals := map[string]tftypes.Value{}
		switch typ := typ.(type) {
		case tftypes.Map:
			for k, e := range v {
				vals[k] = protoValue(t, typ.ElementType, e)
			}
		case tftypes.Object:
			for name, attr := range typ.AttributeTypes {
				vals[name] = protoValue(t, attr, v[name])
			}
			for name := range v {
				if _, ok := typ.AttributeTypes[name]; !ok {
					t.Fatalf("no attribute %q in %s", name, typ)
				}
			}
		default:
			t.Fatalf("a map for %s", typ)
		}
		return tftypes.NewValue(typ, vals)
	default:
		return tftypes.NewValue(typ, v)
	}
}

func dynamic(t *testing.T, typ tftypes.Type, v map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, protoValue(t, typ, v))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// protocolRun is one plan's RPCs: settings configure the provider, and,
// when that succeeds, typeName is read with config. It returns every
// diagnostic, configuration's and read's, as "summary: detail" lines.
type protocolRun struct {
	settings map[string]any
	typeName string // "" to configure only
	config   map[string]any
	builtIn  [2]string // the build's production and development addresses
	getenv   func(string) string
	readCtx  context.Context // the read's context, as Terraform cancels it; nil for none
}

func (r protocolRun) diagnostics(t *testing.T) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	p := newProvider("test", r.builtIn[0], r.builtIn[1])
	p.getenv = noEnv
	if r.getenv != nil {
		// The test's environment, but for where the pace is shared.
		p.getenv = func(k string) string { return cmp.Or(r.getenv(k), noEnv(k)) }
	}
	server, err := newServerFor(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	conf, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: dynamic(t, ps.Schema.Type().TerraformType(ctx), r.settings)})
	if err != nil {
		t.Fatal(err)
	}
	diags := conf.Diagnostics
	if r.typeName == "" || hasError(diags) {
		return diags
	}
	var ds datasource.SchemaResponse
	map[string]func() datasource.DataSource{profilesTypeName: NewProfilesDataSource, "browserprofile_profile": NewProfileDataSource}[r.typeName]().
		Schema(ctx, datasource.SchemaRequest{}, &ds)
	if r.readCtx != nil {
		ctx = r.readCtx
	}
	read, err := server.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: r.typeName, Config: dynamic(t, ds.Schema.Type().TerraformType(ctx), r.config)})
	if err != nil {
		t.Fatal(err)
	}
	return append(diags, read.Diagnostics...)
}

func hasError(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// expectDiagnostic runs r and checks that one diagnostic of the severity
// holds each phrase in order, across its summary and detail, with the
// attribute given ("" for none).
func (r protocolRun) expectDiagnostic(t *testing.T, severity tfprotov6.DiagnosticSeverity, attr string, phrases ...string) {
	t.Helper()
	diags := r.diagnostics(t)
	re := words(phrases...)
	for _, d := range diags {
		if d.Severity == severity && re.MatchString(d.Summary+"\n"+d.Detail) && attributeName(d) == attr {
			return
		}
	}
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.Severity.String() + " [" + attributeName(d) + "] " + d.Summary + "\n" + d.Detail + "\n\n")
	}
	t.Errorf("no %s diagnostic on %q saying %q; got:\n%s", severity, attr, phrases, b.String())
}

func attributeName(d *tfprotov6.Diagnostic) string {
	if d.Attribute == nil {
		return ""
	}
	return d.Attribute.String()
}
