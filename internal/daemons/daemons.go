// Package daemons runs real servers from Debian (squid, nginx, HAProxy, Redis) on
// loopback for one test, as users meet them in front of a service, and
// puts a server a round trip away (Distant): the
// tests of internal/client and internal/e2e start them, and stop them when
// the test ends. Test support only: no provider code imports it.
package daemons

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// daemon is a real server from Debian (squid, nginx, haproxy) run on
// loopback for one test: its binary, a folder of its own for its
// configuration and logs, and the address it is to listen on.
type Daemon struct {
	Bin, Dir, Addr string
}

// New finds the server name, as BROWSERPROFILE_<NAME> or on PATH, or
// skips the test (fails it, when need); makes its folder, which the server's own user may
// write to (t.TempDir's parent is closed to other users); and picks a free
// address on loopback.
func New(t testing.TB, name string, need bool) Daemon {
	t.Helper()
	env := "BROWSERPROFILE_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	bin := os.Getenv(env)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath(name); err != nil {
			missing := t.Skipf
			if need {
				missing = t.Fatalf
			}
			missing("no %s: make test installs Debian's (scripts/ensure-debian.sh %[1]s) and names it in %s", name, env)
		}
	}
	dir, err := os.MkdirTemp("", "browserprofile-"+name+"-") //nolint:usetesting // t.TempDir's parent is closed to the server's user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return Daemon{Bin: bin, Dir: dir, Addr: ln.Addr().String()}
}

// Path is name in the daemon's folder.
func (d Daemon) Path(name string) string { return filepath.Join(d.Dir, name) }

// Start runs the daemon with args, its output in out (in its folder), until
// the test ends or stop is called, and waits until it listens.
func (d Daemon) Start(t testing.TB, out string, args ...string) (stop func()) {
	t.Helper()
	f, err := os.Create(d.Path(out))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := exec.Command(d.Bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(stop)
	name := filepath.Base(d.Bin)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", d.Addr); err == nil {
			c.Close()
			return stop
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(d.Path(out))
			t.Fatalf("%s exited before it listened:\n%s", name, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within 20 s", name)
		}
	}
}

// WriteFile writes a daemon's file.
func WriteFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Nginx runs nginx on loopback in front of upstream, limiting requests
// as limit_req does (a leaky bucket of 50 a second, a burst of 10 served at
// once), refusals answered 429 with no Retry-After. It returns its address,
// and what gives the status of every request it answered so far.
func Nginx(t testing.TB, upstream string, need bool) (string, func() []string) {
	t.Helper()
	return NginxLimit(t, upstream, need, "burst=10 nodelay", 0)
}

// NginxLimit is Nginx with limit_req's burst and delay as given: "" for a
// bucket of one (no burst), "burst=20" for a burst queued at the rate;
// and with each refusal, a Retry-After of retryAfter seconds (0: none).
func NginxLimit(t testing.TB, upstream string, need bool, burst string, retryAfter int) (string, func() []string) {
	t.Helper()
	d := New(t, "nginx", need)
	WriteFile(t, d.Path("nginx.conf"), fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
events { worker_connections 256; }
http {
	log_format status $status;
	access_log %[1]s/access.log status;
	limit_req_zone $binary_remote_addr zone=api:1m rate=50r/s;
	limit_req_status 429;
	server {
		listen %[2]s;
		location / {
			limit_req zone=api %[4]s;
			proxy_set_header Host $http_host;
			proxy_pass http://%[3]s;
		}
		%[5]s
	}
}
`, d.Dir, d.Addr, upstream, burst, nginxRetryAfter(retryAfter)))
	d.Start(t, "nginx.out", "-p", d.Dir, "-e", d.Path("error.log"), "-c", d.Path("nginx.conf"))
	return d.Addr, func() []string { return LogLines(t, d.Path("access.log")) }
}

// nginxRetryAfter is the server block's lines that answer limit_req's
// refusals with a Retry-After of seconds, or none for 0: add_header alone
// does not reach an error page nginx makes itself.
func nginxRetryAfter(seconds int) string {
	if seconds == 0 {
		return ""
	}
	return fmt.Sprintf(`error_page 429 = @refused;
		location @refused {
			add_header Retry-After %d always;
			return 429 "too many requests\n";
		}`, seconds)
}

// HAProxy runs HAProxy on loopback in front of upstream, refusing
// (429, no Retry-After) a request when more than 50 came in the last second,
// refused ones counted too, as a stick table's http_req_rate does.
func HAProxy(t testing.TB, upstream string, need bool) (string, func() []string) {
	t.Helper()
	return HAProxyLimit(t, upstream, need, 0)
}

// HAProxyLimit is HAProxy with each refusal sending a Retry-After of
// retryAfter seconds (0: none).
func HAProxyLimit(t testing.TB, upstream string, need bool, retryAfter int) (string, func() []string) {
	t.Helper()
	header := ""
	if retryAfter > 0 {
		header = fmt.Sprintf(" hdr Retry-After %d", retryAfter)
	}
	d := New(t, "haproxy", need)
	WriteFile(t, d.Path("haproxy.cfg"), fmt.Sprintf(`global
	log stdout format raw local0
defaults
	mode http
	log global
	option dontlognull
	log-format "%%ST"
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend api
	bind %s
	stick-table type ip size 1k expire 10s store http_req_rate(1s)
	http-request track-sc0 src
	http-request deny deny_status 429%s if { sc_http_req_rate(0) gt 50 }
	default_backend standin
backend standin
	server standin %s
`, d.Addr, header, upstream))
	d.Start(t, "haproxy.out", "-db", "-f", d.Path("haproxy.cfg"))
	return d.Addr, func() []string { return LogLines(t, d.Path("haproxy.out")) }
}

// Redis runs Debian's redis-server on loopback, keeping nothing on disk,
// with the configuration lines extra (RedisAt). It returns the daemon (its
// Addr) and what stops it; it stops when the test ends too.
func Redis(t testing.TB, need bool, extra ...string) (Daemon, func()) {
	t.Helper()
	return RedisAt(t, New(t, "redis-server", need), extra...)
}

// RedisAt runs redis-server as d, at its address (again, after a stop),
// with the configuration lines extra: a user, or TLS ("port 0" and a
// tls-port at the address's port).
func RedisAt(t testing.TB, d Daemon, extra ...string) (Daemon, func()) {
	t.Helper()
	_, port, _ := net.SplitHostPort(d.Addr)
	conf := fmt.Sprintf("bind 127.0.0.1\nport %s\nsave \"\"\nappendonly no\nprotected-mode no\ndir %s\n", port, d.Dir)
	WriteFile(t, d.Path("redis.conf"), conf+strings.Join(extra, "\n")+"\n")
	return d, d.Start(t, "redis.out", d.Path("redis.conf"))
}

// Refusals counts the 429s among statuses.
func Refusals(statuses []string) int {
	n := 0
	for _, status := range statuses {
		if status == "429" {
			n++
		}
	}
	return n
}

// AtLeast is what statuses gives once it holds at least n statuses, or
// after logWait: a daemon logs a request once it has answered, so a client
// can hold the answer before the daemon has written its line.
func AtLeast(statuses func() []string, n int) []string {
	deadline := time.Now().Add(logWait)
	for {
		all := statuses()
		if len(all) >= n || time.Now().After(deadline) {
			return all
		}
		time.Sleep(logPoll)
	}
}

// How long AtLeast waits for a daemon's log, and how often it looks: the
// lines come within a millisecond or so of the answers.
const (
	logWait = 5 * time.Second
	logPoll = 5 * time.Millisecond
)

// LogLines is the lines of a log.
func LogLines(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// Distant is the address of a relay on loopback to addr that holds what
// passes each way for oneWay: a server a round trip of twice that away,
// as users meet one. It stops when the test ends.
func Distant(tb testing.TB, addr string, oneWay time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			go late(in, out, oneWay)
			go late(out, in, oneWay)
		}
	}()
	return ln.Addr().String()
}

// late copies from src to dst, each chunk oneWay after it was read, in
// order, and closes both when src ends.
func late(src, dst net.Conn, oneWay time.Duration) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer dst.Close()
		for c := range chunks {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	defer close(chunks)
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunks <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(oneWay)}
		}
		if err != nil {
			return
		}
	}
}
