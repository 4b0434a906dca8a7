# Sourced by the other scripts.

# write_dev_overrides FILE PLUGIN_DIR: a Terraform (and OpenTofu) CLI
# configuration that takes the provider from PLUGIN_DIR (dev_overrides): no
# terraform init, no registry.
write_dev_overrides() {
  cat >"$1" <<CFG
provider_installation {
  dev_overrides {
    "registry.terraform.io/browserprofile/browserprofile" = "$2"
    "registry.opentofu.org/browserprofile/browserprofile" = "$2"
  }
  direct {}
}
CFG
}

# tool_cache DIR: the directory, outside the repository, that holds a tool
# built once from the Go module proxy.
tool_cache() {
  echo "${BROWSERPROFILE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-browserprofile}/$1"
}

# resolve_only: true in the tool-pin check's mode, where the ensure-*
# scripts take nothing from PATH or their cache.
resolve_only() {
  [ "${BROWSERPROFILE_RESOLVE_ONLY:-}" = 1 ]
}

# go_install_cached NAME VERSION MODULE_PATH HOW_LONG: prints the path of
# NAME, built once with `go install MODULE_PATH@VERSION` from the Go module
# proxy into its tool_cache; HOW_LONG is said before a build starts.
#
# With BROWSERPROFILE_RESOLVE_ONLY=1 (scripts/check-tool-pins.sh), nothing is
# built or cached: `go install -n` loads every package the build would, so
# every module zip it needs is fetched into GOMODCACHE, and a module the proxy
# refuses fails here as it would fail the build.
go_install_cached() {
  if resolve_only; then
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" go install -n "$3@$2" >/dev/null
    echo "$1 $2"
    return
  fi
  local cache
  cache="$(tool_cache "$1-$2")"
  if [ ! -x "$cache/$1" ]; then
    echo "building $1 $2 from the Go module proxy into $cache (once; $4 on 2 cores)" >&2
    mkdir -p "$cache"
    GOBIN="$cache" GOFLAGS=-mod=mod go install "$3@$2" >&2
  fi
  echo "$cache/$1"
}

# start_standin DIR [FLAGS...]: starts DIR/standin (built from cmd/standin) on
# loopback, waits until it listens, and exports the BROWSERPROFILE_*
# variables it wrote. Sets standin_pid; its log is DIR/standin.log.
start_standin() {
  local dir="$1"
  shift
  rm -f "$dir/standin.env"
  "$dir/standin" -env-file "$dir/standin.env" "$@" >"$dir/standin.log" 2>&1 &
  standin_pid=$!
  for _ in $(seq 100); do [ -s "$dir/standin.env" ] && break; sleep 0.1; done
  [ -s "$dir/standin.env" ] || { cat "$dir/standin.log" >&2; echo "the stand-in API did not start" >&2; return 1; }
  set -a
  # shellcheck disable=SC1091
  . "$dir/standin.env"
  set +a
}

# stop_standin: stops the stand-in start_standin started, if any; it prints
# its request counts to its log as it exits.
stop_standin() {
  if [ -n "${standin_pid:-}" ]; then
    kill "$standin_pid" 2>/dev/null || true
    wait "$standin_pid" 2>/dev/null || true
  fi
  standin_pid=""
}
