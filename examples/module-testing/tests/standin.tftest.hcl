# Against the stand-in API: run `make standin` in another shell and paste the
# line it prints, which sets BROWSERPROFILE_PRODUCTION_BASE_URL and
# BROWSERPROFILE_PRODUCTION_API_TOKEN for the stand-in's production
# environment. Without it, run the offline tests alone:
# tofu test -filter=tests/mock.tftest.hcl
provider "browserprofile" {
  environment = "production"
}

run "monitors_the_standins_active_profiles" {
  assert {
    condition     = output.monitored_keys == tolist(["bp_prod_01HZX3K9Q2", "bp_prod_01HZX3M7T8"])
    error_message = "Expected the stand-in's two active production profiles, got ${jsonencode(output.monitored_keys)}."
  }
  assert {
    condition     = output.monitor_names["bp_prod_01HZX3K9Q2"] == "Checkout monitor"
    error_message = "Expected the name from the stand-in's record."
  }
}

run "the_filter_keeps_every_status_asked_for" {
  variables {
    statuses = ["active", "suspended"]
  }
  assert {
    condition     = length(output.monitored_keys) == 3
    error_message = "Expected a monitor for each of the stand-in's three production profiles, got ${jsonencode(output.monitored_keys)}."
  }
}
