// Command standin runs the local stand-in for the browser profile service on
// loopback, for the demo and the benchmarks. It prints the base addresses and
// writes the environment variables a provider needs to -env-file, so that no
// token is ever printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

func main() {
	var opts standin.Options
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	envFile := flag.String("env-file", "", "write BROWSERPROFILE_* variables for the development environment to this file")
	generate := flag.Int("generate", 0, "serve this many generated profiles in development instead of the fixture")
	flag.StringVar(&opts.Shape, "shape", "", "list body shape: array, data, profiles_total, data_items")
	flag.StringVar(&opts.Paging, "paging", "", "paging mode: "+strings.Join(slices.Sorted(maps.Keys(standin.PagingModes)), ", "))
	flag.IntVar(&opts.PageSize, "page-size", 0, "profiles per page when paging")
	flag.Float64Var(&opts.RateLimit, "rate-limit", 0, "requests per second accepted before answering 429")
	flag.IntVar(&opts.FailEvery, "fail-every", 0, "answer every Nth request with a 503 HTML page")
	flag.IntVar(&opts.ResetEvery, "reset-every", 0, "drop the connection of every Nth request")
	flag.DurationVar(&opts.Delay, "delay", 0, "delay before each answer")
	flag.Parse()

	host, _, err := net.SplitHostPort(*addr)
	ip := net.ParseIP(host)
	if loopback := host == "localhost" || ip != nil && ip.IsLoopback(); err != nil || !loopback {
		log.Fatalf("standin: -addr must be a loopback address, got %q", *addr)
	}
	opts.Environments = standin.DemoEnvironments()
	if *generate > 0 {
		opts.Environments[1].Profiles = standin.Generate(*generate)
	}
	srv := standin.New(opts)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("standin: %v", err)
	}
	base := "http://" + ln.Addr().String()
	for _, env := range opts.Environments {
		fmt.Printf("%s: %s/%s/api/v1 (%d profiles)\n", env.Name, base, env.Name, len(env.Profiles))
	}
	if *envFile != "" {
		vars := []string{
			"BROWSERPROFILE_ENVIRONMENT=development",
			"BROWSERPROFILE_BASE_URL=" + base + "/development/api/v1",
			"BROWSERPROFILE_API_TOKEN=" + standin.DemoDevelopmentToken,
			"STANDIN_PRODUCTION_BASE_URL=" + base + "/production/api/v1",
			"STANDIN_PRODUCTION_TOKEN=" + standin.DemoProductionToken,
		}
		if err := os.WriteFile(*envFile, []byte(strings.Join(vars, "\n")+"\n"), 0o600); err != nil {
			log.Fatalf("standin: %v", err)
		}
	}

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
