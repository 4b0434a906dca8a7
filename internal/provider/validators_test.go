package provider

import (
	"regexp"
	"testing"
)

// headers may not set what the provider sends itself, nor what cannot be
// a header; they are refused at validate, offline.
func TestAccProvider_headersRefusedOffline(t *testing.T) {
	for config, want := range map[string]string{
		`headers = { Authorization = "Basic x" }`: `headers cannot set Authorization`,
		`headers = { "user-agent" = "x" }`:        `headers cannot set User-Agent`,
		`headers = { "Bad Name" = "x" }`:          `cannot be a header's name`,
		`headers = { X-Gw = "a\nb" }`:             `holds a line break`,
	} {
		t.Run(want, func(t *testing.T) {
			expectInvalid(t, "provider \"browserprofile\" {\n  "+config+"\n}\n"+`data "browserprofile_profiles" "all" {}`, regexp.MustCompile(want))
		})
	}
}

// user_agent's products are refused at validate when no header could carry
// them.
func TestAccProvider_userAgentRefusedOffline(t *testing.T) {
	for config, want := range map[string]string{
		`user_agent = ["ci/1\nX-Injected: 1"]`: `visible ASCII characters, with spaces only between them`,
		`user_agent = [" ci/1"]`:               `visible ASCII characters`,
		`user_agent = ["café/1"]`:              `visible ASCII characters`,
		`user_agent = [""]`:                    `visible ASCII characters`,
	} {
		t.Run(config, func(t *testing.T) {
			expectInvalid(t, "provider \"browserprofile\" {\n  "+config+"\n}\n"+`data "browserprofile_profiles" "all" {}`, words("user_agent", want))
		})
	}
}
