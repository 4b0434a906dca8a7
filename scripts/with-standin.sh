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
trap 'stop_standin; rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/bin/terraform-provider-browserprofile" . && go build -o "$tmp/standin" ./cmd/standin)
start_standin "$tmp" ${standin_args[@]+"${standin_args[@]}"}
head -n 2 "$tmp/standin.log"

write_dev_overrides "$tmp/terraformrc" "$tmp/bin"
export TF_CLI_CONFIG_FILE="$tmp/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
cd "$work"
"$@"
