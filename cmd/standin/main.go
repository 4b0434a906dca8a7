// Command standin runs the local stand-in for the browser profile service on
// loopback, for the demo and the benchmarks. It prints the base addresses and
// writes the environment variables a provider needs to -env-file, so that no
// token is ever printed.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/loopback"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// writeShellFile writes export lines that set up a shell for the stand-in:
// each environment's address and token in the provider's per-environment
// variables (so that an empty provider block reads production, and aliased
// blocks each read their own), TF_VAR_browserprofile_token (the README's
// variable), and the CLI configuration; first, it sources first, when set
// (make cli's file, which puts the CLIs on PATH).
func writeShellFile(path, first, cliConfig, base string) error {
	vars := [][2]string{
		{"BROWSERPROFILE_PRODUCTION_BASE_URL", base + "/production/api/v1"},
		{"BROWSERPROFILE_PRODUCTION_API_TOKEN", standin.DemoProductionToken},
		{"BROWSERPROFILE_DEVELOPMENT_BASE_URL", base + "/development/api/v1"},
		{"BROWSERPROFILE_DEVELOPMENT_API_TOKEN", standin.DemoDevelopmentToken},
		{"TF_VAR_browserprofile_token", standin.DemoProductionToken},
	}
	if cliConfig != "" {
		vars = append(vars, [2]string{"TF_CLI_CONFIG_FILE", cliConfig})
	}
	var b strings.Builder
	b.WriteString("# Written by the stand-in API (make standin): its tokens open nothing else.\n")
	if first != "" {
		fmt.Fprintf(&b, ". '%s'\n", strings.ReplaceAll(first, "'", `'\''`))
	}
	for _, v := range vars {
		fmt.Fprintf(&b, "export %s='%s'\n", v[0], strings.ReplaceAll(v[1], "'", `'\''`))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// commandLine is what the flags set besides the stand-in's options.
type commandLine struct {
	addr, envFile, shellFile, cliConfig, shellFirst, trace, tlsDir *string
	generate                                                       *int
}

// parseFlags reads the command line.
func parseFlags() (opts standin.Options, cl commandLine) {
	cl.addr = flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	cl.envFile = flag.String("env-file", "", "write BROWSERPROFILE_* variables to this file, the development environment as the default")
	cl.shellFile = flag.String("shell-file", "", "write export lines for a shell to this file: both environments' addresses and tokens, and TF_CLI_CONFIG_FILE (-cli-config)")
	cl.cliConfig = flag.String("cli-config", "", "with -shell-file: the Terraform CLI configuration (dev_overrides) to export as TF_CLI_CONFIG_FILE")
	cl.shellFirst = flag.String("shell-source", "", "with -shell-file: a file for it to source first (make cli's)")
	cl.generate = flag.Int("generate", 0, "serve this many generated profiles in development instead of the fixture")
	flag.StringVar(&opts.Shape, "shape", "", "list body shape: array, data, profiles_total, data_items")
	flag.StringVar(&opts.Paging, "paging", "", "paging mode: "+strings.Join(slices.Sorted(maps.Keys(standin.PagingModes)), ", "))
	flag.IntVar(&opts.PageSize, "page-size", 0, "profiles per page when paging")
	flag.Float64Var(&opts.RateLimit, "rate-limit", 0, "requests per second accepted before answering 429")
	flag.IntVar(&opts.RateBurst, "rate-burst", 0, "the rate limit's token bucket size (default: one second's worth)")
	flag.IntVar(&opts.RateDropAfter, "rate-drop-after", 0, "halve the rate limit after this many requests")
	flag.BoolVar(&opts.RateWindow, "rate-window", false, "count the rate limit per wall-clock second (a fixed window) instead of in a token bucket")
	flag.BoolVar(&opts.RateSliding, "rate-sliding", false, "count the rate limit in any rolling second (a sliding log) instead of in a token bucket")
	flag.IntVar(&opts.Quota, "quota", 0, "requests accepted in each fixed window of -quota-window, announced on every answer (-announce)")
	flag.DurationVar(&opts.QuotaWindow, "quota-window", time.Second, "the window of -quota")
	flag.BoolVar(&opts.QuotaOpened, "quota-opened", false, "open each window of -quota with the first request after the last one ended, as GitHub does, instead of at fixed times")
	flag.StringVar(&opts.Announce, "announce", "github", "how -quota is announced: github (X-RateLimit-*, the reset a whole second), discord (X-RateLimit-*, to the millisecond) or ietf (RateLimit-Policy and RateLimit)")
	flag.StringVar(&opts.RetryAfterForm, "retry-after", "seconds", "how a 429 says when to come back: seconds (rounded up), date, reset (X-RateLimit-Reset instead of Retry-After), or none")
	flag.IntVar(&opts.FailEvery, "fail-every", 0, "answer every Nth request with a 503 HTML page")
	flag.IntVar(&opts.ResetEvery, "reset-every", 0, "drop the connection of every Nth request")
	flag.DurationVar(&opts.Delay, "delay", 0, "delay before each answer")
	flag.DurationVar(&opts.Latency, "latency", 0, "a network's round trip: half before each request is counted, half before its answer leaves")
	flag.BoolVar(&opts.RateCountRefused, "rate-count-refused", false, "with -rate-sliding: count refused requests too, as HAProxy's request-rate counters do")
	flag.IntVar(&opts.LimitStatus, "limit-status", 0, "the status a rate limit answers: 429 unless set (403, as GitHub's limits do)")
	flag.IntVar(&opts.MaxInFlight, "max-in-flight", 0, "refuse (429) a request that arrives while this many are being worked on")
	flag.DurationVar(&opts.Work, "work", 0, "a random delay up to this after each request is counted and accepted, before it is answered, as a real service's own work varies")
	flag.DurationVar(&opts.Jitter, "jitter", 0, "a random delay up to this before each request is counted, as requests reach a real limiter unevenly")
	flag.Int64Var(&opts.Oversize, "oversize", 0, "serve the list as a streamed JSON array of this many bytes, with no Content-Length")
	cl.trace = flag.String("trace", "", "append a line per request to this file: milliseconds since start, status, path")
	cl.tlsDir = flag.String("tls", "", "serve https with a certificate authority made for the run, requiring a client certificate it issued; write ca.pem, client.pem and client-key.pem to this folder and name them in the env files")
	flag.Parse()
	return opts, cl
}

func main() {
	opts, cl := parseFlags()
	if *cl.trace != "" {
		f, err := os.Create(*cl.trace)
		if err != nil {
			log.Fatalf("standin: %v", err)
		}
		defer f.Close()
		opts.Trace = f
	}
	if host, _, err := net.SplitHostPort(*cl.addr); err != nil || !loopback.Is(host) {
		log.Fatalf("standin: -addr must be a loopback address, got %q", *cl.addr)
	}
	opts.Environments = standin.DemoEnvironments()
	if *cl.generate > 0 {
		opts.Environments[1].Profiles = standin.Generate(*cl.generate)
	}
	srv := standin.New(opts)

	ln, base, tlsVars, err := listen(*cl.addr, *cl.tlsDir)
	if err != nil {
		log.Fatalf("standin: %v", err)
	}
	for _, env := range opts.Environments {
		fmt.Printf("%s: %s/%s/api/v1 (%d profiles)\n", env.Name, base, env.Name, len(env.Profiles))
	}
	if *cl.shellFile != "" {
		if err := writeShellFile(*cl.shellFile, *cl.shellFirst, *cl.cliConfig, base); err != nil {
			log.Fatalf("standin: %v", err)
		}
		fmt.Printf("\nIn another shell, paste this line to point Terraform and OpenTofu at the stand-in and at the provider just built:\n\n  source %s\n\n"+
			"Then terraform plan (or tofu plan) works in any folder, with no init: the README's Usage example reads the production environment.\n"+
			"Ctrl-C stops the stand-in.\n\n", *cl.shellFile)
	}
	// Written last: scripts wait for it as the sign that the stand-in is up
	// and every file it writes is there.
	if *cl.envFile != "" {
		if err := writeEnvFile(*cl.envFile, base, tlsVars); err != nil {
			log.Fatalf("standin: %v", err)
		}
	}
	serve(ln, srv)
}

// listen opens addr, with TLS when tlsDir is set (serveTLS), and returns
// the base of every address and the variables naming the TLS files.
func listen(addr, tlsDir string) (net.Listener, string, []string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, err
	}
	if tlsDir == "" {
		return ln, "http://" + ln.Addr().String(), nil, nil
	}
	ln, tlsVars, err := serveTLS(ln, tlsDir)
	if err != nil {
		return nil, "", nil, err
	}
	return ln, "https://" + ln.Addr().String(), tlsVars, nil
}

// writeEnvFile writes the BROWSERPROFILE_* variables a provider needs, the
// development environment as the default.
func writeEnvFile(path, base string, tlsVars []string) error {
	vars := []string{
		"BROWSERPROFILE_ENVIRONMENT=development",
		"BROWSERPROFILE_BASE_URL=" + base + "/development/api/v1",
		"BROWSERPROFILE_API_TOKEN=" + standin.DemoDevelopmentToken,
		"BROWSERPROFILE_PRODUCTION_BASE_URL=" + base + "/production/api/v1",
		"BROWSERPROFILE_PRODUCTION_API_TOKEN=" + standin.DemoProductionToken,
	}
	vars = append(vars, tlsVars...)
	return os.WriteFile(path, []byte(strings.Join(vars, "\n")+"\n"), 0o600)
}

// serve answers on ln until SIGINT or SIGTERM, then prints the counts.
func serve(ln net.Listener, srv *standin.Server) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server := &http.Server{Handler: srv}
	go func() {
		<-ctx.Done()
		server.Close()
	}()
	if err := server.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatalf("standin: %v", err)
	}
	fmt.Printf("standin: %d requests, %d answered 429\n", srv.Requests.Load(), srv.Limited.Load())
}

// serveTLS wraps ln in TLS with a certificate authority made for the run,
// requiring a client certificate it issued, and writes the authority's
// certificate and a client certificate and key to dir; vars name them for
// the provider.
func serveTLS(ln net.Listener, dir string) (net.Listener, []string, error) {
	pki, err := standin.NewPKI("browserprofile stand-in CA")
	if err != nil {
		return nil, nil, err
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	cfg, err := pki.ServerTLS(true, host, "localhost")
	if err != nil {
		return nil, nil, err
	}
	certPEM, keyPEM, err := pki.Issue("browserprofile stand-in client")
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{"ca.pem": pki.CAPEM, "client.pem": certPEM, "client-key.pem": keyPEM}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, nil, err
		}
	}
	return tls.NewListener(ln, cfg), []string{
		"BROWSERPROFILE_CA_CERT_FILE=" + filepath.Join(dir, "ca.pem"),
		"BROWSERPROFILE_CLIENT_CERT_FILE=" + filepath.Join(dir, "client.pem"),
		"BROWSERPROFILE_CLIENT_KEY_FILE=" + filepath.Join(dir, "client-key.pem"),
	}, nil
}
