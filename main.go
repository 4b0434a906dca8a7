package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

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

	err := providerserver.Serve(context.Background(), provider.New(version, productionBaseURL, developmentBaseURL), providerserver.ServeOpts{
		Address: "registry.terraform.io/browserprofile/browserprofile",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
