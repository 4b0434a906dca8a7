package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
)

// A proxy's refusal reads as the contract's failure rows do: the cause (the
// proxy's, with its answer), what was sent, what to check, no credentials.
func TestAddError_aProxysRefusalIsNamedAsTheProxys(t *testing.T) {
	d := &providerData{environment: "production", baseURL: "https://api.example.com/api/v1"}
	var diags diag.Diagnostics
	d.addError(&diags, path.Empty(), &client.RequestError{
		Kind: client.ErrProxy, Method: "GET", URL: "https://api.example.com/api/v1/browsers", Attempts: 1,
		Proxy: "http://***@proxy.corp.example:3128", ProxyStatus: "407 Proxy Authentication Required",
	})
	if len(diags) != 1 {
		t.Fatalf("diagnostics: %v", diags)
	}
	summary, detail := diags[0].Summary(), diags[0].Detail()
	for _, want := range []string{
		"Request: GET https://api.example.com/api/v1/browsers", "Environment: production",
		"through the proxy http://***@proxy.corp.example:3128", "(407: it wants credentials", "Check the proxy's address and credentials",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
	if summary != "The proxy refused the connection: 407 Proxy Authentication Required" {
		t.Errorf("summary %q", summary)
	}
}
