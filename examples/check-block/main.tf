# Use the list as a connectivity and credential check: every plan and apply
# reports, as a warning, when the token or base address is wrong, without
# failing the run.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

check "browserprofile_reachable" {
  data "browserprofile_profiles" "probe" {}

  assert {
    condition     = length(data.browserprofile_profiles.probe.profile_keys) > 0
    error_message = "The token can see no browser profiles: check that it belongs to the configured environment."
  }
}
