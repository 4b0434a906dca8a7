# One profile, addressed by its profile_key exactly as the list returned it.
data "browserprofile_profile" "checkout" {
  profile_key = "bp_prod_01HZX3K9Q2"
}

output "checkout_profile_name" {
  value = jsondecode(data.browserprofile_profile.checkout.raw_json).name
}
