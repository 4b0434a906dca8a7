package paceredis

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/redis/go-redis/v9"
)

// Fault is a failure of Redis's that will not pass on its own: the
// setting, or the server's set-up, must change (the package doc lists
// them). Err holds Redis's own words: mask them before they are shown.
type Fault struct {
	Where string // host and port, no credentials
	Cause string // what is wrong, in the provider's words
	Err   error
}

func (f *Fault) Error() string { return fmt.Sprintf("Redis at %s %s (%v)", f.Where, f.Cause, f.Err) }
func (f *Fault) Unwrap() error { return f.Err }

// Fault is the last failure that will not pass on its own, until a step
// passes: nil while Redis works, or fails only for now.
func (s *Store) Fault() *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fault
}

// never says why err will fail every step until a setting or Redis's
// set-up changes, or "" for a failure that may pass (the package doc).
func never(err error) string {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		op         *net.OpError
		notAnswer  *shapeError
		_, moved   = redis.IsMovedError(err)
		redisWords = func(prefixes ...string) bool {
			for _, p := range prefixes {
				if redis.HasErrorPrefix(err, p) {
					return true
				}
			}
			return false
		}
	)
	switch {
	// The last two are Redis 5's and 6's words for a password given to a
	// Redis that has none; 7 takes HELLO's instead, and never says them.
	case redisWords("WRONGPASS", "AUTH <password> called without any password", "Client sent AUTH, but no password"):
		return "refused the user or password the address gives"
	case redisWords("NOAUTH", "Protocol error: unauthenticated"):
		return "wants a password, and the address gives none"
	case redisWords("NOPERM", "The user executing the script can't run"):
		return "does not let the user run a command the store needs, or reach its keys: give the user the ACL rule the many-runs guide gives"
	case redisWords("DB index is out of range", "invalid DB index", "SELECT is not allowed"):
		return "has no database of the number the address gives"
	case redisWords("unknown command"):
		return "does not know a command the store needs (renamed or disabled in its set-up?)"
	case moved:
		return "is a node of a Redis Cluster that holds other keys: name a Redis that is not clustered"
	case errors.As(err, &unknownCA), errors.As(err, &invalid):
		return "sent a certificate that is not trusted: add the authority that signed it to ca_cert_pem"
	case errors.As(err, &hostname):
		return "sent a certificate for another name than the address's host"
	case errors.As(err, &op) && op.Op == "remote error": // crypto/tls's word for an alert Redis sent
		return "refused the TLS handshake (does it want a client certificate? none is offered to Redis)"
	case errors.As(err, &notAnswer):
		return "answered as no Redis does: is it a Redis?"
	}
	return ""
}

// shapeError is an answer to a step's script of a shape it never gives.
type shapeError struct{}

func (*shapeError) Error() string { return "an answer this store did not ask for" }
