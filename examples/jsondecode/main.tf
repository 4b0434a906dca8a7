# The record's fields are not documented and may grow, so the provider gives
# the record as JSON. Pick fields with jsondecode(), with try() for fields a
# record may lack.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

variable "profile_key" {
  type        = string
  description = "A profile_key exactly as browserprofile_profiles returned it."
}

data "browserprofile_profile" "this" {
  profile_key = var.profile_key
}

locals {
  record = jsondecode(data.browserprofile_profile.this.raw_json)
}

output "status" {
  value = try(local.record.status, "unknown")
}

output "browser_engine" {
  value = try(local.record.browser.engine, null)
}
