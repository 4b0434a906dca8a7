package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
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
