# Guard a key before it is used, and the record after it is read.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

provider "browserprofile" {}

variable "profile_key" {
  type = string
}

data "browserprofile_profiles" "all" {}

data "browserprofile_profile" "guarded" {
  profile_key = var.profile_key

  lifecycle {
    precondition {
      condition     = contains(data.browserprofile_profiles.all.profile_keys, var.profile_key)
      error_message = "The profile_key is not in this environment's list: use a key from browserprofile_profiles, not a display name."
    }

    postcondition {
      condition     = try(jsondecode(self.raw_json).status, "") != "suspended"
      error_message = "The profile is suspended."
    }
  }
}
