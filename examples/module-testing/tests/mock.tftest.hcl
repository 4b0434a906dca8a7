# Offline: mock_provider answers the data source with the profiles below, so
# no token, service or network is needed. Mock values are literals (functions
# such as jsonencode are not allowed in them before Terraform 1.15), so each
# raw_json is written as an escaped JSON string. Mock profile_keys and
# profiles together, with the same keys: the module reads both.
#
# A mock fills computed values only: it does not run the module's filter or
# trim records to its fields. So it answers with what the filter would keep
# (the active profiles, their names), and each run that asks for other
# statuses says what the list would then hold (override_data).
# standin.tftest.hcl tests the filter itself.
mock_provider "browserprofile" {
  mock_data "browserprofile_profiles" {
    defaults = {
      profile_keys = ["bp_a", "bp_c"]
      profiles = [
        { profile_key = "bp_a", raw_json = "{\"profile_key\":\"bp_a\",\"name\":\"Checkout monitor\"}" },
        { profile_key = "bp_c", raw_json = "{\"profile_key\":\"bp_c\",\"name\":\"Login smoke test\"}" },
      ]
    }
  }
}

run "monitors_active_profiles" {
  assert {
    condition     = output.monitored_keys == tolist(["bp_a", "bp_c"])
    error_message = "Expected one monitor per active profile, got ${jsonencode(output.monitored_keys)}."
  }
  assert {
    condition     = output.monitor_names["bp_c"] == "Login smoke test"
    error_message = "Expected the name read from raw_json."
  }
}

run "monitors_every_status_asked_for" {
  variables {
    statuses = ["active", "suspended"]
  }
  override_data {
    target = data.browserprofile_profiles.monitored
    values = {
      profile_keys = ["bp_a", "bp_b", "bp_c"]
      profiles = [
        { profile_key = "bp_a", raw_json = "{\"profile_key\":\"bp_a\",\"name\":\"Checkout monitor\"}" },
        { profile_key = "bp_b", raw_json = "{\"profile_key\":\"bp_b\",\"name\":\"Archive crawler\"}" },
        { profile_key = "bp_c", raw_json = "{\"profile_key\":\"bp_c\",\"name\":\"Login smoke test\"}" },
      ]
    }
  }
  assert {
    condition     = length(output.monitored_keys) == 3
    error_message = "Expected a monitor for each of the three profiles."
  }
}

run "an_empty_list_monitors_nothing" {
  override_data {
    target = data.browserprofile_profiles.monitored
    values = {
      profile_keys = []
      profiles     = []
    }
  }
  assert {
    condition     = length(output.monitored_keys) == 0
    error_message = "Expected no monitors for no profiles."
  }
}
