package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// A PEM that is no certificate, a key that is not the certificate's, or
// one without the other fails at plan, naming the attribute and no key.
func TestResolveSettings_badCertificatesNameTheAttributeAndNoKey(t *testing.T) {
	pki, err := standin.NewPKI("test CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, _ := pki.Issue("one")
	_, otherKey, _ := pki.Issue("two")
	str := func(b []byte) types.String { return types.StringValue(string(b)) }
	for name, tc := range map[string]struct {
		cfg        func(*BrowserProfileProviderModel)
		attr, want string
	}{
		"a key as the CA": {func(m *BrowserProfileProviderModel) { m.CACertPEM = str(keyPEM) }, "ca_cert_pem", "holds no PEM certificate"},
		"no PEM at all":   {func(m *BrowserProfileProviderModel) { m.CACertPEM = types.StringValue("corp-ca") }, "ca_cert_pem", "holds no PEM certificate"},
		"another key": {func(m *BrowserProfileProviderModel) {
			m.ClientCertPEM, m.ClientKeyPEM = str(certPEM), str(otherKey)
		}, "client_key_pem", "the private key is not the certificate's"},
		"a certificate alone": {func(m *BrowserProfileProviderModel) { m.ClientCertPEM = str(certPEM) }, "client_key_pem", "and no private key"},
		"a key alone":         {func(m *BrowserProfileProviderModel) { m.ClientKeyPEM = str(keyPEM) }, "client_cert_pem", "and no certificate"},
		"a key as the certificate": {func(m *BrowserProfileProviderModel) {
			m.ClientCertPEM, m.ClientKeyPEM = str(keyPEM), str(keyPEM)
		}, "client_cert_pem", "holds no PEM certificate"},
	} {
		cfg := BrowserProfileProviderModel{APIToken: types.StringValue("t"), BaseURL: types.StringValue("https://api.example.com/api/v1")}
		tc.cfg(&cfg)
		_, diags := resolveSettings(cfg, func(string) string { return "" }, nil)
		if len(diags) != 1 {
			t.Errorf("%s: %d diagnostics, want 1: %v", name, len(diags), diags)
			continue
		}
		d, _ := diags[0].(diag.DiagnosticWithPath)
		text := diags[0].Summary() + diags[0].Detail()
		if d == nil || !d.Path().Equal(path.Root(tc.attr)) || !strings.Contains(text, tc.want) ||
			strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, string(keyPEM[40:80])) || strings.Contains(text, string(otherKey[40:80])) {
			t.Errorf("%s: %v", name, diags)
		}
	}
}
