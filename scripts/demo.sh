#!/usr/bin/env bash
# make demo: the provider's main job, on the built-in stand-in API. Reads the
# profile list, feeds every profile_key into terraform_data with for_each, and
# shows the keys it read. No token to supply, no network, no terraform init.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
terraform="$("$root/scripts/ensure-terraform.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root"/examples/demo/*.tf "$work/"
export TERRAFORM="$terraform"
"$root/scripts/with-standin.sh" "$work" -- bash -c '
  "$TERRAFORM" apply -auto-approve -input=false -no-color
  echo
  echo "profile_keys read from the stand-in API (development environment):"
  "$TERRAFORM" output -no-color -json profile_keys
  echo
  echo "Some of these keys are awkward on purpose: \"100% legit\" (a percent sign and a space),"
  echo "\"q?x=1#frag\" (query and fragment characters), \"team/alpha\" (a slash), \"café-東京\" (non-ASCII)"
  echo "and \"Trailing.Dot.\". Each must reach the service as one path segment and come back byte for"
  echo "byte: the demo shows that for_each and browserprofile_profile handle them as they are."
'
