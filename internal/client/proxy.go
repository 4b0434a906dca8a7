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
// proxy's, named with the proxy's address (the client's proxy for the
// request, its credentials left out): the user then checks HTTPS_PROXY and
// NO_PROXY, not base_url.

// proxyError is a proxy's failure, for classifyTransportError.
type proxyError struct {
	status string // the CONNECT answer's status; "" when the proxy was not reached
	cause  error
}

func (e *proxyError) Error() string {
	if e.status != "" {
		return "the proxy answered the CONNECT with " + e.status
	}
	return fmt.Sprintf("the proxy could not be reached: %v", e.cause)
}

// proxyRefusal is the transport's OnProxyConnectResponse: a CONNECT answer
// other than 200 becomes the proxy's refusal.
func proxyRefusal(_ context.Context, _ *url.URL, _ *http.Request, res *http.Response) error {
	if res.StatusCode == http.StatusOK {
		return nil
	}
	return &proxyError{status: res.Status}
}

// asProxyError recognises a proxy's failure: a refusal, or a dial error to
// the proxy, which Go reports as a net.OpError with the operation
// "proxyconnect".
func asProxyError(err error) (*proxyError, bool) {
	var pe *proxyError
	if errors.As(err, &pe) {
		return pe, true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return &proxyError{cause: op.Err}, true
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
