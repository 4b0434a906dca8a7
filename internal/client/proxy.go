package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// A request through a proxy can fail at the proxy, before the service is
// reached: the proxy cannot be reached (a dial error Go marks
// "proxyconnect"), or it answers the CONNECT with a refusal (407, 403, or
// a 502 or 503 when it cannot reach the service itself). Either is the
// proxy's, named with the proxy's address, its credentials left out: the
// user then checks HTTPS_PROXY and NO_PROXY, not base_url.

// proxyError is a proxy's failure, for classifyTransportError.
type proxyError struct {
	proxy  string // the proxy's address, without credentials; "" when the dial error did not say
	status string // the CONNECT answer's status; "" when the proxy was not reached
	cause  error
}

func (e *proxyError) Error() string {
	if e.status != "" {
		return fmt.Sprintf("the proxy %s answered the CONNECT with %s", e.proxy, e.status)
	}
	return fmt.Sprintf("the proxy %s could not be reached: %v", e.proxy, e.cause)
}

// proxyRefusal is the transport's OnProxyConnectResponse: a CONNECT answer
// other than 200 becomes the proxy's refusal.
func proxyRefusal(_ context.Context, proxy *url.URL, _ *http.Request, res *http.Response) error {
	if res.StatusCode == http.StatusOK {
		return nil
	}
	return &proxyError{proxy: proxyDisplay(proxy), status: res.Status}
}

// asProxyError recognises a dial error to the proxy, which Go reports as a
// net.OpError with the operation "proxyconnect".
func asProxyError(err error) (*proxyError, bool) {
	var pe *proxyError
	if errors.As(err, &pe) {
		return pe, true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return &proxyError{cause: op.Err}, true // the client names the proxy
	}
	return nil, false
}

// proxyDisplay is a proxy's address as messages show it: scheme, host and
// port, and "***@" where it carries credentials.
func proxyDisplay(p *url.URL) string {
	user := ""
	if p.User != nil {
		user = "***@"
	}
	return p.Scheme + "://" + user + p.Host
}
