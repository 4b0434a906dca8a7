package provider

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// The contract's failure rows for connections that cannot work: each named
// for its cause, with the base_url to check, and never as rate limiting.
func TestAccProvider_connectionFailuresNameTheirCause(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(standin.New(standin.Options{Environments: standin.DemoEnvironments()}))
	t.Cleanup(tlsSrv.Close)
	plainRoot, _ := testStandin(t, standin.Options{})
	loopRoot, _ := testStandin(t, standin.Options{RedirectLoop: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	cases := map[string]struct{ root, want string }{
		"untrusted certificate": {tlsSrv.URL, "The base address's TLS certificate is not trusted"},
		"https to plain http":   {strings.Replace(plainRoot, "http://", "https://", 1), "The base address's scheme does not match the server"},
		"http to https":         {strings.Replace(tlsSrv.URL, "https://", "http://", 1), "The base address's scheme does not match the server"},
		"nothing listening":     {closed, "Nothing is listening at the base address"},
		"redirect loop":         {loopRoot, "The base address redirects in a loop"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := tc.root + "/development/api/v1"
			expectError(t, providerBlock(base, standin.DemoDevelopmentToken)+`data "browserprofile_profiles" "all" {}`,
				words(tc.want, "Request: GET "+base+"/browsers", "Check base_url (or BROWSERPROFILE_DEVELOPMENT_BASE_URL): "+base))
		})
	}
	t.Run("name does not resolve", func(t *testing.T) {
		base := "https://nonexistent-host.invalid/api/v1"
		expectError(t, providerBlock(base, standin.DemoDevelopmentToken)+`data "browserprofile_profiles" "all" {}`,
			words("The base address's host name does not resolve", "Check base_url (or BROWSERPROFILE_DEVELOPMENT_BASE_URL): "+base))
	})
}

// A base address without the version prefix is answered with an example
// that keeps the user's own scheme, host and path.
func TestAccProvider_baseAddressExampleKeepsTheUsersAddress(t *testing.T) {
	expectError(t, providerBlock("http://127.0.0.1:18080/production", "x")+`data "browserprofile_profiles" "all" {}`,
		words("its path must end in /api/v1", "for example http://127.0.0.1:18080/production/api/v1"))
}

func TestAccProfileDataSource_anotherProfilesRecordIsNotStored(t *testing.T) {
	root, _ := testStandin(t, standin.Options{WrongRecord: true})
	expectError(t, devProvider(root)+`data "browserprofile_profile" "one" { profile_key = "team/alpha" }`,
		words("The service answered with another profile's record",
			`The read of profile_key "team/alpha" returned the record of profile_key`, "nothing was stored"))
}

func TestAccProfileDataSource_anErrorObjectIsNotStored(t *testing.T) {
	root, _ := testStandin(t, standin.Options{ErrorObject: true})
	expectError(t, devProvider(root)+`data "browserprofile_profile" "one" { profile_key = "team/alpha" }`,
		words("The service answered with an error object", `Body: {"error":{"code":"not_found","profile_key":"team/alpha"}}`,
			`The read of profile_key "team/alpha" returned a success status with an error object`, "nothing was stored"))
}

func TestAccProfilesDataSource_absurdRetryAfterIsShownAsSent(t *testing.T) {
	root, _ := testStandin(t, standin.Options{LimitEvery: 1, RetryAfter: "Wed, 21 Oct 2319 07:28:00 GMT"})
	expectError(t, listConfig(root), words("The service asked to retry later",
		"Retry-After: Wed, 21 Oct 2319 07:28:00 GMT, a pause of a day or more, which the provider does not wait for"))
}

// A 900 KB request id is quoted in part, on one line.
func TestAccProfilesDataSource_hugeRequestIDIsCapped(t *testing.T) {
	root, _ := testStandin(t, standin.Options{HugeRequestID: true, FailEvery: 1})
	expectError(t, devProvider(root, "max_retries = 0")+`data "browserprofile_profiles" "all" {}`,
		words("Response: HTTP 503, request id "+strings.Repeat("r", 40)))
}

// The echoed token, in each form, is masked in the diagnostic (the e2e
// tests check TF_LOG and the whole output for any part of it).
func TestAccProfilesDataSource_echoedTokenIsMasked(t *testing.T) {
	for form, want := range map[string]string{
		"json":  `"received":"Bearer ***"`,
		"url":   "auth=Bearer+***",
		"split": `"received":"Bearer ***`,
		"html":  "Rejected: Bearer ***",
	} {
		t.Run(form, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{EchoAs: form})
			expectError(t, providerBlock(root+"/development/api/v1", "tok/SECRET+9f8e&x=Q1w2E3r4")+`data "browserprofile_profiles" "all" {}`,
				words("API token rejected by the development environment", want))
		})
	}
}

// Terraform hands over keys in Unicode NFC; a key the service spells
// otherwise is read in the service's spelling.
func TestAccProfileDataSource_readsTheServicesSpellingOfAnNFCKey(t *testing.T) {
	nfd := "cafe\u0301"
	rec := `{"profile_key":"` + nfd + `","name":"decomposed"}`
	env := standin.Environment{Name: "development", Token: standin.DemoDevelopmentToken, Profiles: []json.RawMessage{json.RawMessage(rec)}}
	root, _ := testStandin(t, standin.Options{Environments: []standin.Environment{env}})
	expectState(t, devProvider(root)+`data "browserprofile_profile" "one" { profile_key = "café" }`,
		statecheck.ExpectKnownValue("data.browserprofile_profile.one", tfjsonpath.New("raw_json"),
			knownvalue.StringRegexp(regexp.MustCompile(`"name":"decomposed"`))))
}

// A refusal shows the service's reason whole, before the body's excerpt;
// a 406 or 415 says what the provider asked for and what was offered.
func TestAccProvider_refusalsShowTheServicesReason(t *testing.T) {
	for status, want := range map[int][]string{
		422: {"The service answered HTTP 422", "Response: HTTP 422",
			`The service's reason: Invalid request; Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.; query.limit: must match pattern "^[0-9]+$"`,
			"Body: {", "The service refused the request, for the reason above."},
		406: {"The service refused the request's media type (HTTP 406)", `The provider sent "Accept: application/json"`,
			"The service answered with Accept: text/csv, Content-Type: text/plain; charset=utf-8."},
		415: {"The service refused the request's media type (HTTP 415)", `The provider sent "Accept: application/json"`, "Accept: text/csv"},
	} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{Refuse: status})
			expectError(t, listConfig(root), words(want...))
		})
	}
}

// A token too short to mask inside words (1, 3 and 7 characters) leaves
// the provider's words and the base address the user set whole, while the
// service's echo of it is still masked.
func TestAccProvider_shortTokensKeepMessagesWhole(t *testing.T) {
	for _, token := range []string{"t", "api", "abc1234"} {
		t.Run(token, func(t *testing.T) {
			root, _ := testStandin(t, standin.Options{EchoToken: true})
			base := root + "/development/api/v1"
			expectError(t, providerBlock(base, token)+`data "browserprofile_profiles" "all" {}`,
				regexp.MustCompile(`(?s)API token rejected by the development environment.*`+
					regexp.QuoteMeta("Request: GET "+base+"/browsers")+`\s+Environment: development\s+`+
					regexp.QuoteMeta("Base address: "+base)+`.*`+
					regexp.QuoteMeta(`The service's reason: invalid or revoked token`)+`.*`+
					regexp.QuoteMeta(`"received":"Bearer ***"`)+`.*`+
					regexp.QuoteMeta(`the token was created for the development environment`)))
		})
	}
}

// A private certificate authority and a client certificate, in the block
// or from the files the environment names, against a stand-in over TLS
// that requires a client certificate; and each failure row: untrusted CA,
// no client certificate, an unreachable proxy. Cause, what to check, no
// secret.
func TestAccProvider_privateCAsClientCertificatesAndProxies(t *testing.T) {
	pki, err := standin.NewPKI("test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(standin.New(standin.Options{Environments: standin.DemoEnvironments()}))
	if srv.TLS, err = pki.ServerTLS(true, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base := srv.URL + "/development/api/v1"
	certPEM, keyPEM, err := pki.Issue("test client")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"ca.pem": pki.CAPEM, "client.pem": certPEM, "client-key.pem": keyPEM}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inBlock := fmt.Sprintf("ca_cert_pem = %q\n  client_cert_pem = %q\n  client_key_pem = %q", pki.CAPEM, certPEM, keyPEM)
	list := `data "browserprofile_profiles" "all" {}`

	t.Run("in the block", func(t *testing.T) {
		expectState(t, providerBlock(base, standin.DemoDevelopmentToken, inBlock)+list, listsDevKeys)
	})
	t.Run("from the environment's files", func(t *testing.T) {
		t.Setenv(EnvCACertFile, filepath.Join(dir, "ca.pem"))
		t.Setenv(EnvClientCertFile, filepath.Join(dir, "client.pem"))
		t.Setenv(EnvClientKeyFile, filepath.Join(dir, "client-key.pem"))
		resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6, Steps: []resource.TestStep{{
			Config: providerBlock(base, standin.DemoDevelopmentToken) + list, ConfigStateChecks: []statecheck.StateCheck{listsDevKeys},
		}}})
	})
	t.Run("untrusted CA", func(t *testing.T) {
		expectError(t, providerBlock(base, standin.DemoDevelopmentToken)+list,
			words("The base address's TLS certificate is not trusted", "can be given with ca_cert_pem or BROWSERPROFILE_CA_CERT_FILE"))
	})
	t.Run("no client certificate", func(t *testing.T) {
		expectError(t, providerBlock(base, standin.DemoDevelopmentToken, fmt.Sprintf("ca_cert_pem = %q", pki.CAPEM))+list,
			words("The server refused the TLS handshake", "certificate required", "check client_cert_pem and client_key_pem"))
	})
	t.Run("proxy unreachable", func(t *testing.T) {
		// Not loopback, which Go never sends through a proxy; the proxy
		// fails first, so the name is never looked up.
		t.Setenv("HTTPS_PROXY", "http://user:proxy-pw-7e1c9a4b@127.0.0.1:1")
		t.Setenv("NO_PROXY", "")
		resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6, Steps: []resource.TestStep{{
			Config:      providerBlock("https://api.example.invalid/api/v1", standin.DemoDevelopmentToken) + list,
			ExpectError: regexp.MustCompile(`(?s)The proxy could not be reached.*through\s+the\s+proxy\s+http://\*\*\*@127\.0\.0\.1:1.*Check\s+the\s+proxy's\s+address\s+and\s+credentials`),
		}}})
	})
}
