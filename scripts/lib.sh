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

# go_install_cached NAME VERSION MODULE_PATH: prints the path of NAME, built
# once with `go install MODULE_PATH@VERSION` from the Go module proxy into a
# cache outside the repository.
go_install_cached() {
  local cache="${BROWSERPROFILE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-browserprofile}/$1-$2"
  if [ ! -x "$cache/$1" ]; then
    echo "building $1 $2 from the Go module proxy into $cache (once)" >&2
    mkdir -p "$cache"
    GOBIN="$cache" GOFLAGS=-mod=mod go install "$3@$2" >&2
  fi
  echo "$cache/$1"
}
