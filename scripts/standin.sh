#!/usr/bin/env bash
# make standin: builds the provider and the stand-in API, writes a CLI
# configuration whose dev_overrides point at the provider just built, and runs
# the stand-in in the foreground on loopback (127.0.0.1:18080, or STANDIN_ADDR).
# It prints one line to paste into another shell, which exports everything a
# configuration needs; Ctrl-C stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
dir="$(tool_cache standin)"
mkdir -p "$dir/plugins"
echo "building the provider and the stand-in API into $dir (seconds once Go's caches are warm)"
(cd "$root" && go build -o "$dir/plugins/terraform-provider-browserprofile" . && go build -o "$dir/standin" ./cmd/standin)
write_dev_overrides "$dir/terraformrc" "$dir/plugins"
addr="${STANDIN_ADDR:-127.0.0.1:18080}"
echo "starting the stand-in API on $addr (STANDIN_ADDR sets another loopback address)"
exec "$dir/standin" -addr "$addr" -shell-file "$dir/env.sh" -cli-config "$dir/terraformrc"
