# Feed only the active profiles behind a German or Austrian proxy into other
# infrastructure, and keep only their status in the state. The whole list
# is still read and checked; the filter runs after.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

data "browserprofile_profiles" "active_de" {
  filter {
    field  = "status"
    values = ["active"]
  }
  filter {
    field  = "proxy.country"
    values = ["DE", "AT"]
  }
  fields = ["status"]
}

resource "terraform_data" "per_profile" {
  for_each = toset(data.browserprofile_profiles.active_de.profile_keys)

  input = each.key
}
