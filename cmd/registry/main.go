// Command registry serves rehearsed releases (make release-check) as a
// provider registry on loopback, so that a maintainer can run terraform init
// or tofu init against them as users do. It prints the CLI configuration
// that sends registry.terraform.io and registry.opentofu.org to it.
//
//	go run ./cmd/registry dist/rehearsal
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/loopback"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: registry [-addr 127.0.0.1:PORT] RELEASE_DIR...\n\nEach RELEASE_DIR is what scripts/release-rehearsal.sh writes.")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || !loopback.Is(host) {
		log.Fatalf("registry: -addr must be a loopback address, got %q", *addr)
	}
	reg := registry.New("browserprofile", "browserprofile")
	for _, dir := range flag.Args() {
		rel, err := registry.ReadRehearsal(dir)
		if err != nil {
			log.Fatalf("registry: %s: %v", dir, err)
		}
		if err := reg.Publish(rel); err != nil {
			log.Fatalf("registry: %s: %v", dir, err)
		}
		fmt.Printf("serving %s from %s\n", rel.Version, dir)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("registry: %v", err)
	}
	fmt.Printf("\nA CLI configuration (TF_CLI_CONFIG_FILE) that installs from it:\n\n%s", registry.CLIConfig("http://"+ln.Addr().String()))
	log.Fatal(http.Serve(ln, reg))
}
