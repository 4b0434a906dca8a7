package provider

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
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

// dev is a development provider block's settings for the stand-in at root,
// with more settings given.
func dev(root string, more map[string]any) map[string]any {
	s := map[string]any{"environment": "development", "base_url": root + "/development/api/v1", "api_token": standin.DemoDevelopmentToken, "max_retries": 0}
	maps.Copy(s, more)
	return s
}

// Every kind of failure, to its message, through the protocol calls a plan
// makes: the service's answers, connections that cannot work, responses
// the provider cannot use.
func TestDiagnostics_everyFailureToItsMessage(t *testing.T) {
	t.Parallel()
	root := func(opts standin.Options) string { r, _ := testStandin(t, opts); return r }
	plain, other := root(standin.Options{}), root(standin.Options{})
	tlsServer := func(cfg *tls.Config) *httptest.Server {
		srv := httptest.NewUnstartedServer(standin.New(standin.Options{Environments: standin.DemoEnvironments()}))
		srv.TLS, srv.Config.ErrorLog = cfg, log.New(io.Discard, "", 0) // handshakes fail on purpose
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	tlsSrv, mtls := tlsServer(nil), tlsServer(&tls.Config{ClientAuth: tls.RequireAnyClientCert})
	mtlsCA := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: mtls.Certificate().Raw}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	list := func(settings map[string]any) protocolRun {
		return protocolRun{settings: settings, typeName: profilesTypeName}
	}
	one := func(settings map[string]any, key string) protocolRun {
		return protocolRun{settings: settings, typeName: "browserprofile_profile", config: map[string]any{"profile_key": key}}
	}
	const keyAttr = `AttributeName("profile_key")`

	for name, tc := range map[string]struct {
		run   protocolRun
		words []string
		attr  string // the attribute the error is on, if any
	}{
		"token rejected": {list(map[string]any{"environment": "development", "base_url": plain + "/development/api/v1", "api_token": standin.DemoProductionToken}),
			[]string{"API token rejected by the development environment", "Request: GET " + plain + "/development/api/v1/browsers", "1. the token was created for the development environment"}, ""},
		"not JSON": {list(dev(plain, map[string]any{"base_url": plain + "/app/api/v1"})),
			[]string{"The base address did not answer with JSON", "Body: <!doctype html>", "must end in /api/v1"}, ""},
		"Retry-After too long": {list(dev(root(standin.Options{LimitEvery: 1, RetryAfter: "3600"}), nil)),
			[]string{"The service asked to retry later", "longer than the provider waits (max_wait_seconds)", "Try again after"}, ""},
		"Retry-After absurd": {list(dev(root(standin.Options{LimitEvery: 1, RetryAfter: "Wed, 21 Oct 2319 07:28:00 GMT"}), nil)),
			[]string{"The service asked to retry later", "a pause of a day or more"}, ""},
		"another profile's record": {one(dev(root(standin.Options{WrongRecord: true}), nil), "team/alpha"),
			[]string{"The service answered with another profile's record", `The read of profile_key "team/alpha" returned the record of profile_key`}, keyAttr},
		"an error object": {one(dev(root(standin.Options{ErrorObject: true}), nil), "team/alpha"),
			[]string{"The service answered with an error object", "nothing was stored"}, keyAttr},
		"unavailable": {list(dev(root(standin.Options{FailEvery: 1}), nil)),
			[]string{"The service was rate limiting or unavailable", "Response: HTTP 503", "raise max_retries or max_wait_seconds"}, ""},
		"timed out": {list(dev(root(standin.Options{Delay: 3 * time.Second}), map[string]any{"request_timeout_seconds": 1})),
			[]string{"The read timed out", "request_timeout_seconds"}, ""},
		"redirect to another host": {list(dev(root(standin.Options{RedirectTo: other}), nil)),
			[]string{"Refused to follow a redirect to another host", "the token never leaves for another host"}, ""},
		"untrusted certificate": {list(dev(tlsSrv.URL, nil)),
			[]string{"The base address's TLS certificate is not trusted", "ca_cert_pem or BROWSERPROFILE_CA_CERT_FILE"}, ""},
		"handshake refused": {list(dev(mtls.URL, map[string]any{"ca_cert_pem": mtlsCA})),
			[]string{"The server refused the TLS handshake", "client_cert_pem and client_key_pem"}, ""},
		"https to plain http": {list(dev(strings.Replace(plain, "http://", "https://", 1), nil)),
			[]string{"The base address's scheme does not match the server", "Check base_url"}, ""},
		"http to https": {list(dev(strings.Replace(tlsSrv.URL, "https://", "http://", 1), nil)),
			[]string{"The base address's scheme does not match the server"}, ""},
		"nothing listening": {list(dev(closed, nil)),
			[]string{"Nothing is listening at the base address", "Check base_url (or BROWSERPROFILE_DEVELOPMENT_BASE_URL): " + closed + "/development/api/v1"}, ""},
		"name does not resolve": {list(map[string]any{"environment": "development", "base_url": "https://nonexistent-host.invalid/api/v1", "api_token": "x"}),
			[]string{"The base address's host name does not resolve"}, ""},
		"redirect loop": {list(dev(root(standin.Options{RedirectLoop: true}), nil)),
			[]string{"The base address redirects in a loop"}, ""},
		"too large": {list(dev(root(standin.Options{Oversize: 3 << 20}), map[string]any{"max_response_megabytes": 1})),
			[]string{"The response is too large", "max_response_megabytes (1 MB)"}, ""},
		"unexpected shape": {list(dev(root(standin.Options{Truncate: true}), nil)),
			[]string{"The response has a shape the provider does not understand", "unexpected end of JSON input"}, ""},
		"no list route": {list(dev(plain, map[string]any{"base_url": plain + "/staging/api/v1"})),
			[]string{"The base address has no profile list", "Response: HTTP 404"}, ""},
		"media type refused": {list(dev(root(standin.Options{Refuse: 406}), nil)),
			[]string{"The service refused the request's media type (HTTP 406)", "The service answered with Accept: text/csv"}, ""},
		"a reason": {list(dev(root(standin.Options{Refuse: 422}), nil)),
			[]string{"The service answered HTTP 422", "The service's reason: Invalid request", "for the reason above"}, ""},
		"a profile not found": {one(dev(plain, nil), "Marketing Team"),
			[]string{"Profile not found", `Did you mean "bp_dev_01J0A1B2C3"?`, "Response: HTTP 404"}, keyAttr},
		"a member no profile carries": {protocolRun{settings: dev(plain, nil), typeName: profilesTypeName,
			config: map[string]any{"fields": []any{"name", "stauts"}}},
			[]string{`No profile has the member "stauts"`, `fields[1] names "stauts", which none of the 6 profiles in the list carries.`,
				`Did you mean "status"?`, "destroys every resource"}, `AttributeName("fields").ElementKeyInt(1)`},
		"a member the profile lacks": {protocolRun{settings: dev(plain, nil), typeName: "browserprofile_profile",
			config: map[string]any{"profile_key": "bp_dev_01J0A1B2C3", "fields": []any{"proxy.contry"}}},
			[]string{`The profile has no member "proxy.contry"`, `fields[0] names "proxy.contry", which the profile "bp_dev_01J0A1B2C3" does not carry.`,
				`Did you mean "proxy.country"?`, `The record carries: "proxy.country", "proxy.type".`}, `AttributeName("fields").ElementKeyInt(0)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.run.expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, tc.attr, tc.words...)
		})
	}
}

// A status with no reason to quote, and a list that may be short: an error,
// or with allow_incomplete_list a warning that says what it costs.
func TestDiagnostics_statusAndIncompleteList(t *testing.T) {
	t.Parallel()
	teapot, _ := testStandin(t, standin.Options{Refuse: http.StatusTeapot})
	protocolRun{settings: dev(teapot, nil), typeName: profilesTypeName}.expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, "",
		"The service answered HTTP 418", "the body excerpt above may say why")

	short, _ := testStandin(t, standin.Options{Paging: "offhost", PageSize: 4})
	protocolRun{settings: dev(short, nil), typeName: profilesTypeName}.expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, "",
		"The profile list is incomplete", "listed 4 profile(s) over 1 page(s), but it claimed a further page",
		"every resource keyed by a missing profile would be destroyed", "describe it with the provider block's paging setting")
	described, _ := testStandin(t, standin.Options{Paging: "json_server", PageSize: 4})
	protocolRun{settings: dev(described, map[string]any{"paging": map[string]any{"next_from": "header:Link", "page_size_param": "_limit", "page_size": 4}}), typeName: profilesTypeName}.
		expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, "", "The profile list is incomplete",
			`paging.next_from ("header:Link") found nothing on page 1`, "Check the provider block's paging setting")
	protocolRun{settings: dev(short, map[string]any{"allow_incomplete_list": true}), typeName: profilesTypeName}.
		expectDiagnostic(t, tfprotov6.DiagnosticSeverityWarning, "", "The profile list is incomplete",
			"allow_incomplete_list is set, so the partial list was returned", "will be destroyed on the next apply")
}

// A proxy's refusal, through the protocol: HTTPS_PROXY is the process's, so
// this test runs alone.
func TestDiagnostics_aProxysRefusalThroughTheServer(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusProxyAuthRequired)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	protocolRun{settings: map[string]any{"environment": "development", "base_url": "https://api.example.invalid/api/v1", "api_token": "x", "max_retries": 0},
		typeName: profilesTypeName}.expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, "",
		"The proxy refused the connection: 407 Proxy Authentication Required", "through the proxy "+proxy.URL)
}

// Terraform cancelling the plan (Ctrl-C) mid-read is said as that.
func TestDiagnostics_aCancelledRead(t *testing.T) {
	t.Parallel()
	slow, _ := testStandin(t, standin.Options{Delay: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	protocolRun{settings: dev(slow, nil), typeName: profilesTypeName, readCtx: ctx}.expectDiagnostic(t, tfprotov6.DiagnosticSeverityError, "",
		"The read was cancelled", "Terraform cancelled the operation.")
}

// The data sources' Configure guard names a wrong type as a bug.
func TestProviderDataFrom_aWrongTypeIsABug(t *testing.T) {
	t.Parallel()
	var diags diag.Diagnostics
	if d := providerDataFrom("not provider data", &diags); d != nil || !diags.HasError() ||
		!strings.Contains(diags[0].Detail(), "Expected *providerData, got string. This is a bug in the provider") {
		t.Errorf("providerDataFrom = %v, %v", d, diags)
	}
	if d := providerDataFrom(nil, &diags); d != nil || len(diags) != 1 {
		t.Errorf("before configuration: %v, %v", d, diags)
	}
}
