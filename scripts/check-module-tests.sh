#!/usr/bin/env bash
# Usage: check-module-tests.sh CLI...
# `terraform test` (or `tofu test`) in every example module that has tests
# (*.tftest.hcl), with each CLI given, against the freshly built provider
# through dev_overrides (no terraform init), and with the stand-in API running
# for the tests that read it, set up as `make standin` sets it up. Then the
# README's Usage example, copied as it is, must plan. mock_provider needs
# Terraform 1.7 or OpenTofu 1.8: an older CLI is named and skipped.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
tmp="$(mktemp -d)"
trap 'stop_standin; rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/bin/terraform-provider-browserprofile" . && go build -o "$tmp/standin" ./cmd/standin)
write_dev_overrides "$tmp/terraformrc" "$tmp/bin"
# The tests read the stand-in's production environment through the very file
# `make standin` tells users to source.
start_standin "$tmp" -shell-file "$tmp/shell.sh" -cli-config "$tmp/terraformrc"
# shellcheck disable=SC1091
. "$tmp/shell.sh"
export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

failed=0
for cli in "$@"; do
  version="$("$cli" version | sed -n 1p)" # sed reads it all: under pipefail, head could make the CLI die of SIGPIPE
  if [[ "$version" =~ ^Terraform\ v1\.[0-6]\. ]] || [[ "$version" =~ ^OpenTofu\ v1\.[0-7]\. ]]; then
    echo "skipped: $version has no mock_provider"
    continue
  fi
  while IFS= read -r dir; do
    module="${dir%/tests}"
    if out="$(cd "$module" && "$cli" test -no-color 2>&1)"; then
      echo "ok    ${module#"$root"/} with $version: $(echo "$out" | tail -n 1)"
    else
      echo "FAIL  ${module#"$root"/} with $version"; echo "$out"; failed=1
    fi
  done < <(find "$root/examples" -name '*.tftest.hcl' -printf '%h\n' | sort -u)

  usage="$tmp/usage-$(basename "$cli")"
  mkdir -p "$usage"
  sed -n '/^## Usage/,/^## /p' "$root/README.md" | sed -n '/^```terraform$/,/^```$/p' | sed '1d;$d' >"$usage/main.tf"
  if out="$("$cli" -chdir="$usage" plan -input=false -no-color 2>&1)" && grep -q 'first_profile_status = "active"' <<<"$out"; then
    echo "ok    README's Usage example plans with $version"
  else
    echo "FAIL  README's Usage example with $version"; echo "$out"; failed=1
  fi
done
exit "$failed"
