package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

const proxyPassword = "proxy-pw-7e1c9a4b"

// startSquid runs Debian's squid on loopback for the test, as a company's
// forward proxy: it asks for credentials (any it is given will do), and
// resolves standin.test to 127.0.0.1 from a hosts file of its own, since Go
// sends no request for a loopback address through a proxy. It returns the
// proxy's address.
func startSquid(t *testing.T) string {
	t.Helper()
	d := daemons.New(t, "squid", false)
	conf := fmt.Sprintf(`http_port %s
hosts_file %s/hosts
auth_param basic program /usr/lib/squid/basic_fake_auth
acl authed proxy_auth REQUIRED
http_access allow authed
http_access deny all
cache deny all
access_log stdio:%[2]s/access.log
cache_log %[2]s/cache.log
pid_filename %[2]s/squid.pid
coredump_dir %[2]s
shutdown_lifetime 0 seconds
`, d.Addr, d.Dir)
	daemons.WriteFile(t, d.Path("hosts"), "127.0.0.1 standin.test\n")
	daemons.WriteFile(t, d.Path("squid.conf"), conf)
	d.Start(t, "squid.out", "-N", "-f", d.Path("squid.conf"))
	return d.Addr
}

// Through a real forward proxy, with a private authority and a client
// certificate: HTTPS_PROXY, HTTP_PROXY and NO_PROXY as Go reads them, every
// TLS option applied through the tunnel, and the proxy's refusals named as
// the proxy's, its credentials never shown.
func TestProxy_throughARealForwardProxy(t *testing.T) {
	squid := startSquid(t)
	pki, err := standin.NewPKI("test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okProfile))
	if srv.TLS, err = pki.ServerTLS(true, "standin.test"); err != nil {
		t.Fatal(err)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "https://standin.test:" + port + "/api/v1"

	var logs bytes.Buffer // every read's log at debug, its end included
	read := func(proxy, noProxy, base string) error {
		t.Setenv("HTTPS_PROXY", proxy)
		t.Setenv("NO_PROXY", noProxy)
		c := clientFor(t, base, withCA(pki), withClientCert(t, pki))
		ctx, tally := WithTally(tflogtest.RootLogger(context.Background(), &logs))
		_, err := c.GetProfile(ctx, "k1")
		c.LogRead(ctx, tally, nil)
		if err != nil && strings.Contains(fmt.Sprintf("%v %+v", err, err), proxyPassword) {
			t.Errorf("the proxy's password shows in %v", err)
		}
		return err
	}
	defer func() {
		if strings.Contains(logs.String(), proxyPassword) || !strings.Contains(logs.String(), "read done") {
			t.Errorf("the log shows the proxy's password, or lacks the reads:\n%s", logs.String())
		}
	}()
	withCredentials := "http://user:" + proxyPassword + "@" + squid

	if err := read(withCredentials, "", base); err != nil {
		t.Errorf("through the proxy: %v", err)
	}

	var re *RequestError
	err = read("http://"+squid, "", base)
	if !errors.Is(err, ErrProxy) || !errors.As(err, &re) || !strings.HasPrefix(re.ProxyStatus, "407") || re.Proxy != "http://"+squid || re.Attempts != 1 {
		t.Errorf("no credentials: %v (%+v), want the proxy's 407, named", err, re)
	}

	closed := "https://standin.test:1/api/v1"
	err = read(withCredentials, "", closed)
	if !errors.Is(err, ErrProxy) || !errors.As(err, &re) || !strings.HasPrefix(re.ProxyStatus, "503") || re.Proxy != "http://***@"+squid {
		t.Errorf("the proxy cannot reach the host: %v (%+v), want the proxy's 503, its credentials masked", err, re)
	}

	err = read("http://user:"+proxyPassword+"@127.0.0.1:1", "", base)
	if !errors.Is(err, ErrProxy) || !errors.As(err, &re) || re.ProxyStatus != "" || re.Proxy != "http://***@127.0.0.1:1" {
		t.Errorf("no proxy listening: %v (%+v), want the proxy not reached", err, re)
	}

	// NO_PROXY sends it straight, where standin.test does not resolve.
	if err := read(withCredentials, "standin.test", base); !errors.Is(err, ErrDNS) {
		t.Errorf("with NO_PROXY: %v, want the host looked up directly", err)
	}
}
