# One profile, addressed by its profile_key exactly as the list returned it.
data "browserprofile_profile" "checkout" {
  profile_key = "bp_prod_01HZX3K9Q2"
}

output "checkout_profile_name" {
  value = jsondecode(data.browserprofile_profile.checkout.raw_json).name
}

# fields keeps only the members the configuration reads (and the key), so
# the state holds no more of the record than that.
data "browserprofile_profile" "checkout_status" {
  profile_key = "bp_prod_01HZX3K9Q2"
  fields      = ["status", "proxy.country"]
}

output "checkout_proxy_country" {
  value = jsondecode(data.browserprofile_profile.checkout_status.raw_json).proxy.country
}
