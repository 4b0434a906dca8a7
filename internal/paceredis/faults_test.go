package paceredis

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/daemons"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// The runs' user and password, as the many-runs guide names the user, and
// the administrator's, who makes it.
const (
	runner   = "ci-runner"
	runnerPW = "Run-s3cret-9f2"
	adminPW  = "Adm-s3cret-4c1"
)

// guideACL is the line the many-runs guide gives to make the runs' Redis
// user, as the words of an ACL command, with runnerPW for PASSWORD: the
// tests make the user with the guide's own words, so the two cannot drift.
func guideACL(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/guides/many-runs-at-once.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "ACL SETUSER "); ok {
			return strings.Fields(strings.ReplaceAll(rest, ">PASSWORD", ">"+runnerPW))
		}
	}
	t.Fatal("the many-runs guide gives no ACL SETUSER line")
	return nil
}

// TestACL_theGuideGivesTheStoresRule: the guide's line gives the runs'
// user the keys of the store and exactly the commands ACL names.
func TestACL_theGuideGivesTheStoresRule(t *testing.T) {
	words := guideACL(t)
	want := append([]string{runner, "on", ">" + runnerPW, "~browserprofile:pace:*"}, strings.Fields(ACL)...)
	if strings.Join(words, " ") != strings.Join(want, " ") {
		t.Fatalf("the guide's line: %q\nwant: %q", words, want)
	}
}

// server is a Redis on loopback for one test: its daemon, the roots that
// trust its certificate (nil without TLS), and the scheme to reach it by.
type server struct {
	d      daemons.Daemon
	roots  *x509.CertPool
	scheme string
	stop   func()
}

// startRedis runs a Redis whose only users are its administrator and the
// runs' user, made with the guide's line; with TLS only when tlsOn, its
// certificate signed by a CA the test makes; with the configuration lines
// extra.
func startRedis(t *testing.T, tlsOn bool, extra ...string) server {
	t.Helper()
	d := daemons.New(t, "redis-server", true)
	s := server{d: d, scheme: "redis"}
	// The runs' user is made with the guide's rule: a user line of the
	// configuration takes the same words as ACL SETUSER.
	lines := []string{"user default off", "user admin on >" + adminPW + " ~* &* +@all", "user " + strings.Join(guideACL(t), " ")}
	if tlsOn {
		pki, err := standin.NewPKI("test CA")
		if err != nil {
			t.Fatal(err)
		}
		cert, key, err := pki.Issue("redis", "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		daemons.WriteFile(t, d.Path("ca.pem"), string(pki.CAPEM))
		daemons.WriteFile(t, d.Path("cert.pem"), string(cert))
		daemons.WriteFile(t, d.Path("key.pem"), string(key))
		_, port, _ := net.SplitHostPort(d.Addr)
		lines = append(lines, "port 0", "tls-port "+port, "tls-cert-file "+d.Path("cert.pem"),
			"tls-key-file "+d.Path("key.pem"), "tls-ca-cert-file "+d.Path("ca.pem"), "tls-auth-clients no")
		s.roots, s.scheme = x509.NewCertPool(), "rediss"
		s.roots.AppendCertsFromPEM(pki.CAPEM)
	}
	_, s.stop = daemons.RedisAt(t, d, append(lines, extra...)...)
	return s
}

// url is the address of the server as the runs' user, with the path
// (a database, or nothing).
func (s server) url(userinfo, path string) string {
	return s.scheme + "://" + userinfo + s.d.Addr + path
}

// admin is the administrator's client in database db, closed when the
// test ends.
func (s server) admin(t *testing.T, db int) *redis.Client {
	t.Helper()
	opt := &redis.Options{Addr: s.d.Addr, Username: "admin", Password: adminPW, DB: db, Protocol: 2, DisableIdentity: true}
	if s.roots != nil {
		opt.TLSConfig = &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// TestStore_everyAddressFormWithTheGuidesACL: every address form the
// guide and the attribute's doc give works with the user the guide's line
// makes, over TLS, in database 0 and another: runs meet in one state, its
// keys in the database the address names, and nothing is a Fault.
func TestStore_everyAddressFormWithTheGuidesACL(t *testing.T) {
	s := startRedis(t, true)
	for i, tc := range []struct {
		path string
		db   int
	}{{"", 0}, {"/0", 0}, {"/1", 1}, {"/15", 15}} {
		t.Run("database "+tc.path, func(t *testing.T) {
			raw, tok := s.url(runner+":"+runnerPW+"@", tc.path), token+strconv.Itoa(i)
			a, b := open(t, raw, s.roots, tok), open(t, raw, s.roots, tok)
			if _, err := save(t, a, "a"); err != nil {
				t.Fatal(err)
			}
			if was, err := save(t, b, "b"); err != nil || was != "a" {
				t.Fatalf("b found %q (%v): want a's state", was, err)
			}
			name := Name(pace.StateFormat, base, tok)
			if n := s.admin(t, tc.db).Exists(bg, name+":state", name+":version", name+":live").Val(); n != 3 {
				t.Fatalf("%d of the state's three keys in database %d", n, tc.db)
			}
			for _, st := range []*Store{a, b} {
				if err := st.Fault(); err != nil {
					t.Errorf("a store that works: fault %v", err)
				}
			}
		})
	}
	t.Run("a password alone, for requirepass", func(t *testing.T) {
		d, _ := daemons.Redis(t, true, "requirepass "+runnerPW)
		for _, path := range []string{"", "/2"} {
			a, b := open(t, "redis://:"+runnerPW+"@"+d.Addr+path, nil, token), open(t, "redis://:"+runnerPW+"@"+d.Addr+path, nil, token)
			if _, err := save(t, a, "a"); err != nil {
				t.Fatal(err)
			}
			if was, err := save(t, b, "b"); err != nil || was != "a" {
				t.Fatalf("%s: b found %q (%v): want a's state", path, was, err)
			}
		}
	})
}

// TestStore_faultsThatNeverPass: each failure that only a change of the
// setting or of Redis's set-up ends is the store's Fault, with its cause,
// while the store is away as for any failure; none shows the password.
func TestStore_faultsThatNeverPass(t *testing.T) {
	withUser := runner + ":" + runnerPW + "@"
	for _, tc := range []struct {
		name, cause string
		// addr starts the server, and gives the address and roots to use.
		addr func(t *testing.T) (string, *x509.CertPool)
	}{
		{"a wrong password", "refused the user or password", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false)
			return s.url(runner+":wrong-"+runnerPW+"@", ""), nil
		}},
		{"no password to a Redis that wants one", "wants a password", func(t *testing.T) (string, *x509.CertPool) {
			d, _ := daemons.Redis(t, true, "requirepass "+runnerPW)
			return "redis://" + d.Addr, nil
		}},
		{"a rule without SELECT, and a database", "does not let the user run a command", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false)
			s.admin(t, 0).Do(bg, "ACL", "SETUSER", runner, "-select")
			return s.url(withUser, "/1"), nil
		}},
		{"a rule without a script's command", "does not let the user run a command", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false)
			s.admin(t, 0).Do(bg, "ACL", "SETUSER", runner, "-zadd")
			return s.url(withUser, ""), nil
		}},
		{"a rule without the store's keys", "does not let the user run a command", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false)
			s.admin(t, 0).Do(bg, "ACL", "SETUSER", runner, "resetkeys", "~other:*")
			return s.url(withUser, ""), nil
		}},
		{"a database it does not have", "has no database of the number", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false)
			return s.url(withUser, "/99"), nil
		}},
		{"EVALSHA disabled", "does not know a command", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, false, `rename-command EVALSHA ""`)
			return s.url(withUser, ""), nil
		}},
		{"a certificate from another authority", "not trusted", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, true)
			return s.url(withUser, ""), nil // the system's roots alone
		}},
		{"a certificate for another name", "for another name", func(t *testing.T) (string, *x509.CertPool) {
			s := startRedis(t, true)
			_, port, _ := net.SplitHostPort(s.d.Addr)
			return "rediss://" + withUser + "localhost:" + port, s.roots // issued for 127.0.0.1 alone
		}},
		{"TLS that wants a client certificate", "refused the TLS handshake", func(t *testing.T) (string, *x509.CertPool) {
			// Over TLS 1.3 the refusal comes after the handshake, and the
			// first write may find the connection reset instead (not now,
			// until a later step reads the alert); over 1.2 it is the
			// handshake's.
			s := startRedis(t, true, "tls-auth-clients yes", `tls-protocols "TLSv1.2"`)
			return s.url(withUser, ""), s.roots
		}},
		{"a server that is not a Redis", "answered as no Redis does", func(t *testing.T) (string, *x509.CertPool) {
			return "redis://" + notRedis(t, "*3\r\n:1\r\n$1\r\n1\r\n$1\r\nx\r\n"), nil // saved, and a word too many
		}},
		{"a server that answers nothing", "answered as no Redis does", func(t *testing.T) (string, *x509.CertPool) {
			return "redis://" + notRedis(t, "*0\r\n"), nil
		}},
		{"a node of a Cluster that holds other keys", "a node of a Redis Cluster", func(t *testing.T) (string, *x509.CertPool) {
			return "redis://" + clusterNodeWithoutSlots(t), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, roots := tc.addr(t)
			st := open(t, raw, roots, token)
			_, err := save(t, st, "x")
			if !errors.Is(err, pace.ErrAway) {
				t.Fatalf("the step: %v, want the store away", err)
			}
			fault := st.Fault()
			if fault == nil || !strings.Contains(fault.Error(), tc.cause) {
				t.Fatalf("fault %v (step: %v): want one that %s", fault, err, tc.cause)
			}
			if u, _ := url.Parse(raw); fault.Where != u.Host {
				t.Errorf("the fault names %s: want %s", fault.Where, u.Host)
			}
			for _, text := range []string{fault.Error(), err.Error()} {
				if strings.Contains(text, "s3cret") {
					t.Errorf("%q shows a password", text)
				}
			}
		})
	}
}

// TestStore_failuresThatPassAreNoFault: a Redis stopped, paused or
// read-only fails steps for now: away, and no Fault.
func TestStore_failuresThatPassAreNoFault(t *testing.T) {
	withUser := runner + ":" + runnerPW + "@"
	for _, tc := range []struct {
		name string
		// addr starts the server and readies the failure; it gives the
		// address to use.
		addr func(t *testing.T) string
	}{
		{"stopped", func(t *testing.T) string {
			s := startRedis(t, false)
			s.stop()
			return s.url(withUser, "")
		}},
		{"paused (CLIENT PAUSE)", func(t *testing.T) string {
			s := startRedis(t, false)
			s.admin(t, 0).Do(bg, "CLIENT", "PAUSE", "2000", "ALL")
			return s.url(withUser, "")
		}},
		{"read-only (a replica)", func(t *testing.T) string {
			dead := daemons.New(t, "redis-server", true) // an address where no master listens
			host, port, _ := net.SplitHostPort(dead.Addr)
			s := startRedis(t, false, "replicaof "+host+" "+port)
			return s.url(withUser, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t, tc.addr(t), nil, token)
			if _, err := save(t, st, "x"); !errors.Is(err, pace.ErrAway) {
				t.Fatalf("the step: %v, want the store away", err)
			}
			if err := st.Fault(); err != nil {
				t.Fatalf("fault %v: want none, for a failure that passes", err)
			}
		})
	}
}

// notRedis is the address of a server that answers every command with
// the RESP text reply, but HELLO, which it does not know (as Redis 5).
func notRedis(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					cmd, err := readCommand(r)
					if err != nil {
						return
					}
					answer := reply
					if strings.EqualFold(cmd, "HELLO") {
						answer = "-ERR unknown command 'HELLO'\r\n"
					}
					if _, err := c.Write([]byte(answer)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one RESP command (an array of bulk strings) and
// returns its name.
func readCommand(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil {
		return "", fmt.Errorf("not an array: %q", line)
	}
	var name string
	for i := range n {
		head, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		if i == 0 {
			name = string(b[:size])
		}
	}
	return name, nil
}

// clusterNodeWithoutSlots starts two Redis Cluster nodes, gives every
// slot to the second, and returns the first's address once it knows so:
// it answers MOVED for every key.
func clusterNodeWithoutSlots(t *testing.T) string {
	t.Helper()
	var addrs [2]string
	var clients [2]*redis.Client
	for i := range addrs {
		d, _ := daemons.Redis(t, true, "cluster-enabled yes", "cluster-config-file nodes.conf")
		addrs[i] = d.Addr
		clients[i] = redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2})
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	host, port, _ := net.SplitHostPort(addrs[1])
	if err := clients[0].ClusterMeet(bg, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	if err := clients[1].ClusterAddSlotsRange(bg, 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	// The first learns the slots by gossip: watched on the real server,
	// each look a round trip, for at most ten seconds.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := clients[0].Get(bg, "k").Err(); err != nil && strings.HasPrefix(err.Error(), "MOVED") {
			return addrs[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("the first node never learnt that the second holds the slots")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
