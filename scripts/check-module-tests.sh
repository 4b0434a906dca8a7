#!/usr/bin/env bash
# Usage: check-module-tests.sh CLI...
# `terraform test` (or `tofu test`) in every example module that has tests
# (*.tftest.hcl), with each CLI given, against the freshly built provider
# through dev_overrides (no init), and with the stand-in API running for the
# tests that read it, set up as `make standin` sets it up. Then the README's
# Usage example, copied as it is, must plan. mock_provider needs Terraform
# 1.7 or OpenTofu 1.8: an older CLI is named and skipped.
#
# Last, the path a newcomer with no terraform takes, as the README gives it:
# in a shell whose PATH has no terraform or tofu, the line `make standin`
# prints, then a plan of the Usage example and of examples/two-environments
# with the Terraform it puts on PATH, and the module tests with its tofu; and
# the offline mock tests with `make cli`'s line alone, no stand-in running.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
tmp="$(mktemp -d)"
trap 'stop_standin; rm -rf "$tmp"' EXIT

cli_env="$("$root/scripts/cli.sh")"
(cd "$root" && go build -o "$tmp/standin" ./cmd/standin)
# The tests read the stand-in's production environment through the very file
# `make standin` tells users to source.
start_standin "$tmp" -shell-file "$tmp/shell.sh" -shell-source "$cli_env"
export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

# The README's Usage example, copied as it is.
usage="$tmp/README-usage"
mkdir -p "$usage"
sed -n '/^## Usage/,/^## /p' "$root/README.md" | sed -n '/^```terraform$/,/^```$/p' | sed '1d;$d' >"$usage/main.tf"

failed=0
ok() { echo "ok    $1"; }
fail() { echo "FAIL  $1"; echo "$2"; failed=1; }

# module_tests CLI LABEL: terraform test in every example module with tests.
module_tests() {
  while IFS= read -r dir; do
    module="${dir%/tests}"
    if out="$(cd "$module" && "$1" test -no-color 2>&1)" && ! grep -q 'No tests defined' <<<"$out"; then
      ok "${module#"$root"/} with $2: $(echo "$out" | tail -n 1)"
    else
      fail "${module#"$root"/} with $2" "$out"
    fi
  done < <(find "$root/examples" -name '*.tftest.hcl' -printf '%h\n' | sort -u)
}

# plans CLI LABEL DIR WANT: DIR (a copy of an example, or of the README's
# Usage example) plans, and its output holds WANT.
plans() {
  local name
  name="$(basename "$3")"
  if out="$("$1" -chdir="$3" plan -input=false -no-color 2>&1)" && grep -q "$4" <<<"$out"; then
    ok "$name plans with $2"
  else
    fail "$name with $2" "$out"
  fi
}

(
  # shellcheck disable=SC1091
  . "$tmp/shell.sh" >/dev/null
  for cli in "$@"; do
    version="$("$cli" version | sed -n 1p)" # sed reads it all: under pipefail, head could make the CLI die of SIGPIPE
    if [[ "$version" =~ ^Terraform\ v1\.[0-6]\. ]] || [[ "$version" =~ ^OpenTofu\ v1\.[0-7]\. ]]; then
      echo "skipped: $version has no mock_provider"
    else
      module_tests "$cli" "$version"
    fi
    plans "$cli" "$version" "$usage" 'first_profile_status = "active"'
  done
  exit "$failed"
) || failed=1

# A shell with no terraform or tofu of its own.
bare=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -e "$d/terraform" ] || [ -e "$d/tofu" ] || bare="${bare:+$bare:}$d"
done
two_envs="$tmp/two-environments"
cp -r "$root/examples/two-environments" "$two_envs"
(
  export PATH="$bare"
  # shellcheck disable=SC1091
  . "$tmp/shell.sh"
  plans terraform "the pasted line's terraform" "$usage" 'first_profile_status = "active"'
  plans terraform "the pasted line's terraform" "$two_envs" 'only_in_development'
  module_tests tofu "the pasted line's tofu"
  exit "$failed"
) || failed=1
(
  export PATH="$bare"
  unset $(compgen -e | grep '^BROWSERPROFILE_') TF_VAR_browserprofile_token
  # shellcheck disable=SC1090
  . "$cli_env" >/dev/null
  if out="$(cd "$root/examples/module-testing" && tofu test -no-color -filter=tests/mock.tftest.hcl 2>&1)"; then
    ok "the offline mock tests with make cli's line alone: $(echo "$out" | tail -n 1)"
  else
    fail "the offline mock tests with make cli's line alone" "$out"
  fi
  exit "$failed"
) || failed=1
exit "$failed"
