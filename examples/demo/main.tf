# The demo configuration run by `make demo`. The provider block is empty:
# environment, base address and token come from the BROWSERPROFILE_*
# environment variables that scripts/with-standin.sh sets for the stand-in.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

data "browserprofile_profiles" "all" {}

# Feed every profile_key into other infrastructure.
resource "terraform_data" "per_profile" {
  for_each = toset(data.browserprofile_profiles.all.profile_keys)

  input = {
    profile_key = each.key
  }
}

# Read one profile by its key and pick a field from its record.
data "browserprofile_profile" "first" {
  profile_key = data.browserprofile_profiles.all.profile_keys[0]
}

output "profile_keys" {
  value = data.browserprofile_profiles.all.profile_keys
}

output "first_profile_name" {
  value = jsondecode(data.browserprofile_profile.first.raw_json).name
}
