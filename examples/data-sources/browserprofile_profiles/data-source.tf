# Every profile the token can see, sorted by profile_key.
data "browserprofile_profiles" "all" {}

# Feed each profile_key into other infrastructure.
resource "terraform_data" "per_profile" {
  for_each = toset(data.browserprofile_profiles.all.profile_keys)

  input = each.key
}

# Pick fields out of the records with jsondecode().
output "active_profile_keys" {
  value = [
    for p in data.browserprofile_profiles.all.profiles : p.profile_key
    if try(jsondecode(p.raw_json).status, null) == "active"
  ]
}
