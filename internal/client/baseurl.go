package client

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/loopback"
)

// APIPathSuffix is the version segment every base address ends in
// (interface document, Versioning rule 1).
const APIPathSuffix = "/api/v1"

// ParseBaseURL checks a base address against the provider's rules and returns
// it without a trailing slash. The error text is written for the user.
func ParseBaseURL(raw string) (*url.URL, error) {
	if p := Placeholder(raw); p != "" {
		return nil, fmt.Errorf("it still holds the placeholder %s; a real address is needed", p)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("it is not a URL: %v", err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("it must be an absolute URL such as https://api.example.com%s", APIPathSuffix)
	}
	if u.User != nil {
		// Credentials in a URL end up in logs and diagnostics; the token has its own attribute.
		return nil, fmt.Errorf("it must not carry credentials; set api_token instead")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("it must not have a query string or fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback.Is(u.Hostname()) {
			return nil, fmt.Errorf("plain http:// is accepted only for loopback hosts (127.0.0.0/8, ::1, localhost), since the API token would cross the network in clear text; use https://")
		}
	default:
		return nil, fmt.Errorf("its scheme must be https (or http for a loopback host), not %q", u.Scheme)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if !strings.HasSuffix(u.Path, APIPathSuffix) {
		return nil, fmt.Errorf("its path must end in %s (the API's version prefix), for example %s", APIPathSuffix, withAPISuffix(u))
	}
	return u, nil
}

// withAPISuffix is u with the version prefix appended, keeping the user's
// scheme, host and path: only what is missing is added.
func withAPISuffix(u *url.URL) string {
	v := *u
	switch {
	case strings.HasSuffix(v.Path, "/api"):
		v.Path += "/v1"
	default:
		v.Path += APIPathSuffix
	}
	return v.String()
}

// sameOrigin reports whether u has base's scheme, host and port, the only
// place the token may be sent.
func sameOrigin(base, u *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) &&
		strings.EqualFold(u.Hostname(), base.Hostname()) &&
		effectivePort(u) == effectivePort(base)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
