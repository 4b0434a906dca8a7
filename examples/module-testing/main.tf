# A module that uses the provider: one monitor per profile in the given
# statuses (terraform_data stands in for a real monitor). Its tests are in
# tests/: mock.tftest.hcl (mock_provider, offline) and standin.tftest.hcl
# (the stand-in API).
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

variable "statuses" {
  description = "The profile statuses that get a monitor."
  type        = list(string)
  default     = ["active"]
}

# The provider keeps the profiles in the statuses asked for, and only their
# names in the state.
data "browserprofile_profiles" "monitored" {
  filter {
    field  = "status"
    values = var.statuses
  }
  fields = ["name"]
}

locals {
  # Each record decoded once, by key.
  records = {
    for p in data.browserprofile_profiles.monitored.profiles : p.profile_key => jsondecode(p.raw_json)
  }
}

resource "terraform_data" "monitor" {
  for_each = toset(data.browserprofile_profiles.monitored.profile_keys)

  input = {
    profile_key = each.key
    name        = try(local.records[each.key].name, each.key)
  }
}

output "monitored_keys" {
  description = "The keys of the monitored profiles, sorted."
  value       = sort(keys(terraform_data.monitor))
}

output "monitor_names" {
  description = "Each monitored profile's name, by key."
  value       = { for key, m in terraform_data.monitor : key => m.input.name }
}
