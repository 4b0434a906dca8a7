# Feed every profile_key into other infrastructure. terraform_data stands in
# for whatever each profile needs (a queue, a DNS record, a monitor).
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

data "browserprofile_profiles" "all" {}

resource "terraform_data" "per_profile" {
  for_each = toset(data.browserprofile_profiles.all.profile_keys)

  input = {
    profile_key = each.key
  }
}

# A map from key to decoded record, for attributes beyond the key.
locals {
  records = {
    for p in data.browserprofile_profiles.all.profiles : p.profile_key => jsondecode(p.raw_json)
  }
}

resource "terraform_data" "active" {
  for_each = { for key, rec in local.records : key => rec if try(rec.status, "") == "active" }

  input = each.value
}
