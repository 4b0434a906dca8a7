#!/usr/bin/env bash
# make cli: builds the provider, writes a CLI configuration whose
# dev_overrides point at it, builds Terraform 1.5.7 and OpenTofu once (unless
# already built), and writes a file that, sourced, sets TF_CLI_CONFIG_FILE and
# puts those CLIs at the end of PATH, so that a terraform or tofu of your own
# comes first. Prints that file's path, and nothing else, on stdout:
#   source "$(make -s cli)"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
dir="$(tool_cache cli)"
mkdir -p "$dir/plugins" "$dir/bin"
echo "building the provider into $dir/plugins" >&2
(cd "$root" && go build -o "$dir/plugins/terraform-provider-browserprofile" .)
write_dev_overrides "$dir/terraformrc" "$dir/plugins"
# Terraform 1.5.7 plans; terraform test's mock_provider needs Terraform 1.7
# or OpenTofu 1.8, so module tests run with tofu.
ln -sf "$("$root/scripts/ensure-terraform.sh" 1.5.7)" "$dir/bin/terraform"
ln -sf "$("$root/scripts/ensure-tofu.sh")" "$dir/bin/tofu"
cat >"$dir/env.sh" <<SH
# Written by make cli: the provider built from source, and CLIs to run it.
export TF_CLI_CONFIG_FILE='$dir/terraformrc'
case ":\$PATH:" in *':$dir/bin:'*) ;; *) export PATH="\$PATH:$dir/bin" ;; esac
for cli in terraform tofu; do
  echo "\$cli: \$(command -v "\$cli") (\$("\$cli" version | sed -n 1p))"
done
SH
echo "$dir/env.sh"
