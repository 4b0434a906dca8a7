package provider

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// Served by the framework alone, without server.go's direct read, the list
// reads the same: Read is the path any other server would take.
func TestAccProfilesDataSource_frameworkReadMatchesDirectRead(t *testing.T) {
	root, _ := testStandin(t, standin.Options{})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"browserprofile": providerserver.NewProtocol6WithError(newProvider("test", "", "")),
		},
		Steps: []resource.TestStep{{
			Config: listConfig(root),
			ConfigStateChecks: []statecheck.StateCheck{
				listsDevKeys,
				listsRecord(t, 5, "team/alpha"),
			},
		}},
	})
}

// The direct read skips the framework's semantic equality, which only a
// custom type can use: the list's schema must have none, at any depth.
func TestServer_profilesSchemaHasNoCustomTypes(t *testing.T) {
	t.Parallel()
	var walk func(at string, typ attr.Type)
	walk = func(at string, typ attr.Type) {
		if pkg := reflect.TypeOf(typ).PkgPath(); pkg != reflect.TypeFor[basetypes.StringType]().PkgPath() {
			t.Errorf("%s has the type %T, from %s: a custom type the direct read would skip", at, typ, pkg)
		}
		switch typ := typ.(type) {
		case basetypes.ObjectType:
			for name, a := range typ.AttrTypes {
				walk(at+"."+name, a)
			}
		case basetypes.ListType:
			walk(at+"[]", typ.ElemType)
		case basetypes.SetType:
			walk(at+"[]", typ.ElemType)
		case basetypes.MapType:
			walk(at+"{}", typ.ElemType)
		}
	}
	walk(profilesTypeName, profilesSchema().Type())
}
