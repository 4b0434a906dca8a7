terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}

variable "browserprofile_token" {
  description = "API token for the production environment (Settings, then API Tokens)."
  type        = string
  sensitive   = true
}

# Production is the default environment. The token may also come from
# BROWSERPROFILE_API_TOKEN, in which case the variable can be dropped.
provider "browserprofile" {
  environment = "production"
  api_token   = var.browserprofile_token
}
