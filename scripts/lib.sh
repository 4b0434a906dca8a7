# Sourced by the other scripts.

# write_dev_overrides FILE PLUGIN_DIR: a Terraform CLI configuration that
# takes the provider from PLUGIN_DIR (dev_overrides): no terraform init, no
# registry.
write_dev_overrides() {
  cat >"$1" <<CFG
provider_installation {
  dev_overrides {
    "registry.terraform.io/browserprofile/browserprofile" = "$2"
  }
  direct {}
}
CFG
}
