package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

const testToken = "tok-abcdef123456"

// newTestClient returns a client for an httptest server running handler,
// with waits short enough for tests.
func newTestClient(t *testing.T, handler http.HandlerFunc, tweak ...func(*Config)) *Client {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return clientFor(t, srv.URL+"/api/v1", tweak...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRedirect_neverCarriesTokenToAnotherHost(t *testing.T) {
	t.Parallel()
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `[]`)
	}))
	t.Cleanup(other.Close)
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	})
	_, err := c.ListProfiles(context.Background())
	if !errors.Is(err, ErrOffHost) {
		t.Errorf("err = %v, want ErrOffHost", err)
	}
	if v := leaked.Load(); v != nil {
		t.Errorf("the other host was called, Authorization %q", v)
	}
}

func TestRedirect_followedOnSameOrigin(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/browsers" {
			http.Redirect(w, r, "/api/v1/browsers/", http.StatusMovedPermanently)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `[{"profile_key":"a"}]`)
	})
	if list, err := c.ListProfiles(context.Background()); err != nil || len(list.Profiles) != 1 {
		t.Errorf("list %v, err %v", list, err)
	}
}

// tlsStandin serves handler over TLS with a certificate from a private
// authority made for the test, requiring a client certificate it issued
// when requireClient is set.
func tlsStandin(t *testing.T, requireClient bool, handler http.HandlerFunc) (*standin.PKI, string) {
	t.Helper()
	pki, err := standin.NewPKI("test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(handler)
	if srv.TLS, err = pki.ServerTLS(requireClient, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return pki, srv.URL + "/api/v1"
}

// withCA trusts the authority besides the system's roots, as the provider
// configures it.
func withCA(pki *standin.PKI) func(*Config) {
	return func(c *Config) {
		pool, _ := x509.SystemCertPool()
		pool.AppendCertsFromPEM(pki.CAPEM)
		c.RootCAs = pool
	}
}

func withClientCert(t *testing.T, pki *standin.PKI) func(*Config) {
	certPEM, keyPEM, err := pki.Issue("test client")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Certificates = []tls.Certificate{pair} }
}

func okProfile(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, `{"profile_key":"k1"}`)
}

// A private authority is trusted besides the system's roots; without it,
// the certificate is not trusted, and that is never retried.
func TestTLS_aPrivateCertificateAuthority(t *testing.T) {
	t.Parallel()
	pki, base := tlsStandin(t, false, okProfile)
	if _, err := clientFor(t, base, withCA(pki)).GetProfile(context.Background(), "k1"); err != nil {
		t.Errorf("with the private CA: %v", err)
	}
	_, err := clientFor(t, base).GetProfile(context.Background(), "k1")
	var re *RequestError
	if !errors.Is(err, ErrTLS) || !errors.As(err, &re) || re.Attempts != 1 {
		t.Errorf("without it: %v, want ErrTLS after one attempt", err)
	}
}

// A service that requires a client certificate reads with one its
// authority issued, and refuses the handshake without one or with one of
// another authority's.
func TestTLS_aClientCertificate(t *testing.T) {
	t.Parallel()
	pki, base := tlsStandin(t, true, okProfile)
	if _, err := clientFor(t, base, withCA(pki), withClientCert(t, pki)).GetProfile(context.Background(), "k1"); err != nil {
		t.Errorf("with the client certificate: %v", err)
	}
	other, err := standin.NewPKI("another CA")
	if err != nil {
		t.Fatal(err)
	}
	for name, tweaks := range map[string][]func(*Config){
		"none":                {withCA(pki)},
		"another authority's": {withCA(pki), withClientCert(t, other)},
	} {
		_, err := clientFor(t, base, tweaks...).GetProfile(context.Background(), "k1")
		var re *RequestError
		if !errors.Is(err, ErrTLSRefused) || !errors.As(err, &re) || re.Attempts != 1 {
			t.Errorf("client certificate %s: %v, want ErrTLSRefused after one attempt", name, err)
		}
	}
}

// A gateway's headers go with every request, its values are kept out of
// what the service echoes, and they never replace the provider's own.
func TestHeaders_aGatewaysHeadersGoWithEveryRequest(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Clone())
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error":"gateway says no to cf-secret-4f7c9a2e1d6b"}`)
	}, func(c *Config) {
		c.Headers = http.Header{"Cf-Access-Client-Secret": {"cf-secret-4f7c9a2e1d6b"}, "Authorization": {"Basic nope"}, "Accept": {"text/html"}}
	})
	_, err := c.GetProfile(context.Background(), "k1")
	h, _ := got.Load().(http.Header)
	if h.Get("Cf-Access-Client-Secret") != "cf-secret-4f7c9a2e1d6b" || h.Get("Authorization") != "Bearer "+testToken || h.Get("Accept") != "application/json" {
		t.Errorf("headers sent: %v", h)
	}
	if err == nil || strings.Contains(fmt.Sprintf("%v %+v", err, err), "cf-secret-4f7c9a2e1d6b") {
		t.Errorf("err = %v: the header's value shows", err)
	}
}
