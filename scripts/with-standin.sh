#!/usr/bin/env bash
# Usage: with-standin.sh WORKDIR [standin flags...] -- COMMAND...
# Builds the provider and the stand-in API, starts the stand-in on loopback,
# writes a Terraform CLI config whose dev_overrides point at the freshly built
# provider (no terraform init, no registry), exports the BROWSERPROFILE_*
# variables for the stand-in's development environment, and runs COMMAND in
# WORKDIR. The token is passed through the environment and never printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
work="$1"; shift
standin_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do standin_args+=("$1"); shift; done
shift # --

tmp="$(mktemp -d)"
standin_pid=""
cleanup() {
  [ -n "$standin_pid" ] && kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$root" && go build -o "$tmp/bin/terraform-provider-browserprofile" . && go build -o "$tmp/standin" ./cmd/standin)
"$tmp/standin" -env-file "$tmp/standin.env" ${standin_args[@]+"${standin_args[@]}"} >"$tmp/standin.log" 2>&1 &
standin_pid=$!
for _ in $(seq 100); do [ -s "$tmp/standin.env" ] && break; sleep 0.1; done
[ -s "$tmp/standin.env" ] || { cat "$tmp/standin.log" >&2; echo "the stand-in API did not start" >&2; exit 1; }
head -n 2 "$tmp/standin.log"

write_dev_overrides "$tmp/terraformrc" "$tmp/bin"
export TF_CLI_CONFIG_FILE="$tmp/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
export STANDIN_PROVIDER_BIN="$tmp/bin/terraform-provider-browserprofile"
set -a
# shellcheck disable=SC1091
. "$tmp/standin.env"
set +a
cd "$work"
"$@"
