// Package loopback tells whether a host names this machine. The client
// allows plain http:// only to such a host, and the stand-in and the
// registry commands listen only on one; it depends on nothing else in the
// project, so that each of them can use it without touching the others.
package loopback

import (
	"net"
	"strings"
)

// Is reports whether host names this machine: localhost, or an address in
// 127.0.0.0/8 or ::1.
func Is(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
