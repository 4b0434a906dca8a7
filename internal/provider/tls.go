package provider

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
)

// resolveTLS reads the private CA and the client certificate, from the
// block or the files the environment names, into c. Every failure names
// the attribute (and the variable it fell back to), and none quotes a key.
func resolveTLS(c *client.Config, cfg BrowserProfileProviderModel, getenv func(string) string, diags *diag.Diagnostics) {
	caPEM, caFrom, ok := pemSetting(cfg.CACertPEM, "ca_cert_pem", EnvCACertFile, getenv, diags)
	if ok && caPEM != nil {
		if !onlyCertificates(caPEM) {
			diags.AddAttributeError(path.Root("ca_cert_pem"), "Not a certificate authority's certificate",
				caFrom+" holds no PEM certificate, or holds something else beside one (a key?). Give the certificate authority's "+
					"certificate(s) alone, each between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE-----.")
		} else {
			// Added to the machine's roots, never in place of them.
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			pool.AppendCertsFromPEM(caPEM)
			c.RootCAs = pool
		}
	}
	certPEM, certFrom, certOK := pemSetting(cfg.ClientCertPEM, "client_cert_pem", EnvClientCertFile, getenv, diags)
	keyPEM, keyFrom, keyOK := pemSetting(cfg.ClientKeyPEM, "client_key_pem", EnvClientKeyFile, getenv, diags)
	switch {
	case !certOK || !keyOK || certPEM == nil && keyPEM == nil:
	case keyPEM == nil:
		diags.AddAttributeError(path.Root("client_key_pem"), "A client certificate without its key",
			certFrom+" is set, and no private key: set client_key_pem, or "+EnvClientKeyFile+" to the key's file.")
	case certPEM == nil:
		diags.AddAttributeError(path.Root("client_cert_pem"), "A client key without its certificate",
			keyFrom+" is set, and no certificate: set client_cert_pem, or "+EnvClientCertFile+" to the certificate's file.")
	case !onlyCertificates(certPEM):
		diags.AddAttributeError(path.Root("client_cert_pem"), "Not a client certificate",
			certFrom+" holds no PEM certificate, or something else beside it. Give the client certificate (and any intermediate "+
				"certificates after it), each between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE-----.")
	default:
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// tls's own words name no key material; say which file to check.
			diags.AddAttributeError(path.Root("client_key_pem"), "The client key does not fit the certificate",
				fmt.Sprintf("%s and %s do not make a key pair: %s. Check that the key is the certificate's own, "+
					"unencrypted, in PEM.", certFrom, keyFrom, keyPairProblem(err)))
			return
		}
		c.Certificates = []tls.Certificate{pair}
	}
}

// pemSetting reads a PEM setting from the block, or else from the file the
// environment variable names; from says which, for messages. nil when
// neither is set; ok is false after an error.
func pemSetting(v types.String, attr, envVar string, getenv func(string) string, diags *diag.Diagnostics) (b []byte, from string, ok bool) {
	if !v.IsNull() {
		return []byte(v.ValueString()), attr, true
	}
	file := getenv(envVar)
	if file == "" {
		return nil, "", true
	}
	b, err := os.ReadFile(file)
	if err != nil {
		diags.AddAttributeError(path.Root(attr), "Cannot read "+envVar,
			fmt.Sprintf("%s names %q, which cannot be read: %v.", envVar, file, err))
		return nil, "", false
	}
	return b, fmt.Sprintf("the file %s names (%s)", envVar, file), true
}

// onlyCertificates reports whether b holds one or more PEM certificates and
// nothing else but white space.
func onlyCertificates(b []byte) bool {
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return false
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return false
		}
		n++
	}
	return n > 0 && len(bytes.TrimSpace(b)) == 0
}

// keyPairProblem says what tls.X509KeyPair found, in words that never
// carry the key.
func keyPairProblem(err error) string {
	switch err.Error() {
	case "tls: private key does not match public key":
		return "the private key is not the certificate's"
	case "tls: failed to find any PEM data in key input", "tls: found a certificate rather than a key in the PEM for the private key":
		return "no PEM private key was found"
	default:
		return "the private key could not be read (an encrypted key, or one of a kind Go does not read)"
	}
}
