# Production and development side by side: one aliased provider block per
# environment, each with its own token. Left null, a token comes from its own
# environment's variable (BROWSERPROFILE_PRODUCTION_API_TOKEN,
# BROWSERPROFILE_DEVELOPMENT_API_TOKEN), and so does each base address: the
# two never mix.
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

variable "production_token" {
  type      = string
  sensitive = true
  default   = null
}

variable "development_token" {
  type      = string
  sensitive = true
  default   = null
}

provider "browserprofile" {
  alias       = "production"
  environment = "production"
  api_token   = var.production_token
}

provider "browserprofile" {
  alias       = "development"
  environment = "development"
  api_token   = var.development_token
}

data "browserprofile_profiles" "production" {
  provider = browserprofile.production
}

data "browserprofile_profiles" "development" {
  provider = browserprofile.development
}

# Keys are environment-specific: compare them, never copy one across.
output "only_in_development" {
  value = setsubtract(
    data.browserprofile_profiles.development.profile_keys,
    data.browserprofile_profiles.production.profile_keys,
  )
}
