#!/usr/bin/env bash
# Every example passes `terraform fmt -check` and `terraform validate`, the
# latter against the freshly built provider through dev_overrides: no
# terraform init, no registry. Snippets without a terraform block (the
# per-data-source examples) get one in their temporary copy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
terraform="${TERRAFORM:-$("$root/scripts/ensure-terraform.sh")}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/bin/terraform-provider-browserprofile" .)
write_dev_overrides "$tmp/terraformrc" "$tmp/bin"
export TF_CLI_CONFIG_FILE="$tmp/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
"$terraform" fmt -check -recursive -diff "$root/examples"

failed=0 count=0
while IFS= read -r dir; do
  rel="${dir#"$root"/}"
  work="$tmp/work/$rel"
  mkdir -p "$work"
  cp "$dir"/*.tf "$work/"
  if ! grep -q required_providers "$work"/*.tf; then
    cat >"$work/zz_required_providers.tf" <<'TF'
terraform {
  required_providers {
    browserprofile = {
      source = "browserprofile/browserprofile"
    }
  }
}
TF
  fi
  count=$((count + 1))
  if out="$("$terraform" -chdir="$work" validate -no-color 2>&1)"; then
    echo "ok    $rel"
  else
    echo "FAIL  $rel"; echo "$out"; failed=1
  fi
done < <(find "$root/examples" -name '*.tf' -printf '%h\n' | sort -u)
echo "$count examples validated"
exit "$failed"
