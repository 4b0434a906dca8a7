#!/usr/bin/env bash
# make standin: make cli, then the stand-in API in the foreground on loopback
# (127.0.0.1:18080, or STANDIN_ADDR). It prints one line to paste into another
# shell, which sets up everything a configuration needs: make cli's CLI
# configuration and PATH, and the stand-in's addresses and tokens. Ctrl-C
# stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
cli_env="$("$root/scripts/cli.sh")"
dir="$(tool_cache standin)"
mkdir -p "$dir"
echo "building the stand-in API into $dir"
(cd "$root" && go build -o "$dir/standin" ./cmd/standin)
addr="${STANDIN_ADDR:-127.0.0.1:18080}"
echo "starting the stand-in API on $addr (STANDIN_ADDR sets another loopback address)"
exec "$dir/standin" -addr "$addr" -shell-file "$dir/env.sh" -shell-source "$cli_env"
