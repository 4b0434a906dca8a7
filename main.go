package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/provider"
)

// Set at release through -ldflags -X (see .goreleaser.yml). The base
// addresses are empty in a development build, where base_url is required.
var (
	version            = "dev"
	productionBaseURL  = ""
	developmentBaseURL = ""
)

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers such as delve")
	flag.Parse()

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	newServer := provider.NewServer(version, productionBaseURL, developmentBaseURL)
	err := tf6server.Serve("registry.terraform.io/browserprofile/browserprofile", func() tfprotov6.ProviderServer {
		s, err := newServer()
		if err != nil {
			log.Fatal(err)
		}
		return s
	}, opts...)
	if err != nil {
		log.Fatal(err)
	}
}
