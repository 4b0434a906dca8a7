package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// addError turns a client error into the diagnostic the contract promises:
// a one-line summary, then what was sent (method, path, environment, base
// address; never the token), what came back, and what to do. attr, when not
// empty, is the attribute at fault.
func (d *providerData) addError(diags *diag.Diagnostics, attr path.Path, err error) {
	summary, advice := d.explain(err)
	detail := advice
	var re *client.RequestError
	if errors.As(err, &re) {
		detail = d.describe(re) + "\n\n" + advice
	}
	if attr.Equal(path.Empty()) {
		diags.AddError(summary, detail)
	} else {
		diags.AddAttributeError(attr, summary, detail)
	}
}

// explain is a failure's summary and what to do, by the kind of error: a
// *client.RequestError's fields are read only where one is there.
func (d *providerData) explain(err error) (summary, advice string) {
	var re *client.RequestError
	errors.As(err, &re)
	for _, by := range []func(error, *client.RequestError) (string, string){d.explainService, d.explainConnection, d.explainResponse} {
		if summary, advice := by(err, re); summary != "" {
			return summary, advice
		}
	}
	return "Request failed", err.Error()
}

// explainService explains what the service said: of the token, the address,
// its limits and its records.
func (d *providerData) explainService(err error, re *client.RequestError) (string, string) {
	switch {
	case errors.Is(err, client.ErrUnauthorized):
		return fmt.Sprintf("API token rejected by the %s environment", d.environment), fmt.Sprintf(
			"The service refused the token. Check that:\n"+
				"  1. the token was created for the %[1]s environment: a token belongs to one environment and is valid only against its base address, %[2]s;\n"+
				"  2. it is sent as \"Authorization: Bearer <token>\": set api_token or %[3]s to the token alone, without a \"Bearer \" prefix;\n"+
				"  3. it has not been revoked and was copied whole (web application: Settings, then API Tokens).",
			d.environment, d.baseURL, d.tokenVars)
	case errors.Is(err, client.ErrNotJSON):
		return "The base address did not answer with JSON", fmt.Sprintf(
			"The base address must end in %s and be the API address of the %s environment, not the web application's "+
				"or another site's. Check base_url (or %s).", client.APIPathSuffix, d.environment, d.baseURLVars)
	case errors.Is(err, client.ErrRetryAfterTooLong) && re != nil:
		wait := time.Until(re.RetryAt).Round(time.Second)
		if wait >= client.LongestPause {
			return "The service asked to retry later", fmt.Sprintf(
				"The service answered with %s: %s, a pause of a day or more, which the provider does not wait for. "+
					"Try again later; if this persists, the service is misreporting its limit.", re.RetryHeader, re.RetryAfter)
		}
		return "The service asked to retry later", fmt.Sprintf(
			"The service asked for a pause of %s (%s: %s), longer than the provider waits (max_wait_seconds). "+
				"Try again after %s (in about %s).", wait, re.RetryHeader, re.RetryAfter, re.RetryAt.UTC().Format(time.RFC3339), wait)
	case errors.Is(err, client.ErrWrongRecord) && re != nil:
		return "The service answered with another profile's record", fmt.Sprintf(
			"The read of profile_key %q returned the record of profile_key %q. The record is not the one asked for, "+
				"so nothing was stored. Check that base_url is the API's address; if it is, report this to the service's owners.",
			re.Key, re.GotKey)
	case errors.Is(err, client.ErrErrorObject) && re != nil:
		return "The service answered with an error object", fmt.Sprintf(
			"The read of profile_key %q returned a success status with an error object instead of a profile (see the body above), "+
				"so nothing was stored.", re.Key)
	case errors.Is(err, client.ErrUnavailable):
		return "The service was rate limiting or unavailable", "The provider retries 429 (and a 403 that says it is a rate limit), 502, 503, 504 and dropped connections, " +
			"honouring Retry-After, slowing its pace for a rate limit without one and backing off after an outage; every attempt failed. Try again later, or raise max_retries or max_wait_seconds."
	case errors.Is(err, client.ErrTimeout):
		return "The read timed out", "The read, retries and pages included, did not finish within request_timeout_seconds. " +
			"Raise request_timeout_seconds, or try again when the service is less busy."
	case errors.Is(err, client.ErrOffHost):
		return "Refused to follow a redirect to another host", "The service redirected the request away from the base address's own " +
			"scheme, host and port. The provider does not follow it, so the token never leaves for another host. " +
			"Set base_url to the address the API is really served from."
	}
	return "", ""
}

// explainConnection explains a connection that cannot work: TLS, proxies,
// schemes, names, ports, redirects, silence.
func (d *providerData) explainConnection(err error, re *client.RequestError) (string, string) {
	switch {
	case errors.Is(err, client.ErrTLS):
		return "The base address's TLS certificate is not trusted", d.checkBaseURL(
			"The server's certificate is not trusted by this machine, or is not for the base address's host name. " +
				"If base_url names the right host, the machine needs the issuing certificate authority in its trust store; " +
				"a private one (a company's, or a TLS-inspecting proxy's) can be given with ca_cert_pem or " + EnvCACertFile + ". " +
				"A certificate problem is never retried.")
	case errors.Is(err, client.ErrTLSRefused):
		return "The server refused the TLS handshake", d.checkBaseURL(
			"The server, or a gateway in front of it, ended the TLS handshake with the alert above. Most often it requires a " +
				"client certificate and got none, or one it does not trust: check client_cert_pem and client_key_pem (or " +
				EnvClientCertFile + " and " + EnvClientKeyFile + "), and that the certificate is issued by the authority the " +
				"gateway trusts. This is never retried.")
	case errors.Is(err, client.ErrProxy):
		summary, proxy := "The proxy could not be reached", ""
		if re != nil {
			proxy = re.Proxy
			if re.ProxyStatus != "" {
				summary = "The proxy refused the connection: " + re.ProxyStatus
			}
		}
		return summary, fmt.Sprintf(
			"The request went through the proxy %s, which HTTPS_PROXY (or HTTP_PROXY) names, and failed there, before the "+
				"service: the proxy could not be reached, or it refused to connect to the base address's host (407: it wants "+
				"credentials, given as http://user:password@host:port in HTTPS_PROXY; 403: it does not allow that host; 502 or "+
				"503: it could not reach the host itself). Check the proxy's address and credentials, and NO_PROXY if the base "+
				"address should not go through a proxy at all. This is never retried.", proxy)
	case errors.Is(err, client.ErrSchemeMismatch):
		return "The base address's scheme does not match the server", d.checkBaseURL(
			"The server at the base address does not speak the protocol its scheme says: https:// to a plain-HTTP server, " +
				"or http:// to an https server. Check the scheme and the port; this is never retried.")
	case errors.Is(err, client.ErrRefused):
		return "Nothing is listening at the base address", d.checkBaseURL(
			"The connection was refused: no server listens on that host and port, or a firewall rejects the connection. " +
				"Check the host and the port.")
	case errors.Is(err, client.ErrDNS):
		return "The base address's host name does not resolve", d.checkBaseURL(
			"The host name could not be looked up. Check it for typos, and that this machine can resolve it (VPN, DNS).")
	case errors.Is(err, client.ErrRedirectLoop):
		return "The base address redirects in a loop", d.checkBaseURL(
			"The service redirected the request back to an address already tried, or too many times. " +
				"The base address is probably not the API's; this is never retried.")
	case errors.Is(err, client.ErrNoAnswer) && re != nil:
		return "The service did not answer in time", d.checkBaseURL(fmt.Sprintf(
			"The connection opened, but no response arrived within %s, on every attempt. "+
				"Check that the base address is the API's, or try again when the service is less busy.", re.HeaderWait))
	}
	return "", ""
}

// explainResponse explains a response the provider cannot use, by its size, shape or status.
func (d *providerData) explainResponse(err error, re *client.RequestError) (string, string) {
	switch {
	case errors.Is(err, client.ErrBodyTooLarge):
		return "The response is too large", fmt.Sprintf("The body (a list's pages together) is larger than max_response_megabytes (%d MB), "+
			"so it was refused without being held in memory. Check that base_url is the API's address; if the list really is that "+
			"large, raise max_response_megabytes.", d.maxResponseMB)
	case errors.Is(err, client.ErrUnexpectedShape):
		return "The response has a shape the provider does not understand", "The body is JSON, but neither a profile nor a list of " +
			"profiles carrying profile_key was found in it. Check that base_url is the API's address; if it is, please report this with the excerpt above."
	case errors.Is(err, client.ErrNotFound):
		// Reached from the list only: a profile's 404 has its own diagnostic.
		return "The base address has no profile list", fmt.Sprintf(
			"The service answered 404 for its list route, which always exists on the API: the base address must end in %s "+
				"and be the API address of the %s environment. Check base_url (or %s).", client.APIPathSuffix, d.environment, d.baseURLVars)
	case errors.Is(err, context.Canceled):
		return "The read was cancelled", "Terraform cancelled the operation."
	case re != nil && (re.StatusCode == http.StatusNotAcceptable || re.StatusCode == http.StatusUnsupportedMediaType):
		offered := "The service did not say what it offers."
		if re.Offered != "" {
			offered = "The service answered with " + re.Offered + "."
		}
		return fmt.Sprintf("The service refused the request's media type (HTTP %d)", re.StatusCode), fmt.Sprintf(
			"The provider sent \"Accept: application/json\", as every request to the API carries, and no request body. %s "+
				"An API that will not answer in JSON is not the browser profile service's API: check base_url (or %s).", offered, d.baseURLVars)
	case re != nil && re.Reason != "":
		return fmt.Sprintf("The service answered HTTP %d", re.StatusCode), "The service refused the request, for the reason above."
	case re != nil:
		return fmt.Sprintf("The service answered HTTP %d", re.StatusCode), "The service refused the request; the body excerpt above may say why."
	}
	return "", ""
}

// addStoreFault warns, once per run, that the Redis pace_store names can
// never work as set (client.StoreFault): the run paces alone meanwhile,
// and nothing else would tell the user who set it up.
func (d *providerData) addStoreFault(diags *diag.Diagnostics) {
	err := d.client.StoreFault()
	if err == nil {
		return
	}
	diags.AddWarning(d.paceStoreSource+" cannot be used as set", fmt.Sprintf(
		"%s names a Redis this run cannot share its pace in: %s.\n\n"+
			"That will not pass until %[1]s or the Redis changes. Meanwhile this run paces alone, as a run without a store "+
			"does, and the plan goes on; runs on other machines do not share its pace, so together they may be refused more "+
			"often. Redis is still asked again, and used as soon as it works. The guide \"Many runs at once\" gives the "+
			"address forms and the ACL rule the store needs. (The value is not shown: it may hold a password.)",
		d.paceStoreSource, err))
}

// addIncomplete reports a list that may be short: an error, unless the
// user accepts a partial list (allow_incomplete_list), then a warning.
func (d *providerData) addIncomplete(diags *diag.Diagnostics, inc *listing.IncompleteError) {
	var b strings.Builder
	fmt.Fprintf(&b, "The service listed %d profile(s) over %d page(s), but it claimed %s. Paging stopped because %s.\n\n",
		inc.Have, inc.Pages, inc.Claimed, inc.Reason)
	fmt.Fprintf(&b, "Request: GET %s\nEnvironment: %s\nBase address: %s\n\n", inc.URL, d.environment, d.baseURL)
	if d.allowIncomplete {
		b.WriteString("allow_incomplete_list is set, so the partial list was returned. Resources keyed by a missing " +
			"profile (for_each over profile_keys) will be destroyed on the next apply.")
		diags.AddWarning("The profile list is incomplete", b.String())
		return
	}
	b.WriteString("This is an error because profile_keys usually feeds for_each: on the next apply, every resource keyed by " +
		"a missing profile would be destroyed.\n\n")
	if d.pagingSet {
		b.WriteString("Check the provider block's paging setting against the service's paging: the setting says how to reach " +
			"the next page, and the service's own totals, page counts and has_more are still checked.")
	} else {
		b.WriteString("If the service pages in a way the provider does not recognise, describe it with the provider block's paging " +
			"setting (next_from, page_param or offset_param).")
	}
	b.WriteString(" If a partial list is acceptable here, set allow_incomplete_list = true in the " +
		"provider block: the list is then returned, with this message as a warning.")
	diags.AddError("The profile list is incomplete", b.String())
}

// checkBaseURL ends the advice for a connection that cannot work.
func (d *providerData) checkBaseURL(cause string) string {
	return fmt.Sprintf("%s\n\nCheck base_url (or %s): %s", cause, d.baseURLVars, d.baseURL)
}

// describe says what was sent and what came back.
func (d *providerData) describe(re *client.RequestError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request: %s %s\nEnvironment: %s\nBase address: %s\n", re.Method, re.URL, d.environment, d.baseURL)
	switch {
	case re.StatusCode != 0:
		fmt.Fprintf(&b, "Response: HTTP %d", re.StatusCode)
	case re.Cause != nil:
		fmt.Fprintf(&b, "Response: none (%v)", re.Cause)
	default:
		b.WriteString("Response: none")
	}
	if re.RequestID != "" {
		fmt.Fprintf(&b, ", request id %s", re.RequestID)
	}
	if re.Attempts > 1 {
		fmt.Fprintf(&b, ", after %d attempts over %s", re.Attempts, re.Elapsed)
		if re.StatusCode != 0 && re.Cause != nil {
			fmt.Fprintf(&b, " (the last: %v)", re.Cause)
		}
	}
	if re.Reason != "" {
		fmt.Fprintf(&b, "\nThe service's reason: %s", re.Reason)
	}
	if re.Excerpt != "" {
		fmt.Fprintf(&b, "\nBody: %s", re.Excerpt)
	}
	if re.Cause != nil && re.StatusCode != 0 && re.Attempts <= 1 {
		fmt.Fprintf(&b, "\nProblem: %v", re.Cause)
	}
	return b.String()
}

// providerDataFrom is the Configure guard shared by the data sources.
func providerDataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil // the provider is not configured yet (validate)
	}
	d, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return d
}
