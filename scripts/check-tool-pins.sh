#!/usr/bin/env bash
# Usage: check-tool-pins.sh
# Every tool the project's scripts build from the Go module proxy, at its
# pinned version, resolves from the proxy alone: each one's module graph and
# every module its build loads download into one empty, temporary module
# cache (GOMODCACHE), so that a module the proxy refuses fails here, naming
# it, rather than on the first machine whose cache lacks it. Nothing is
# built; the tools' own ensure-* scripts run in their resolve-only mode, so
# this checks exactly what they would build. The tools resolve in parallel.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/browserprofile-pins.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export GOMODCACHE="$work/mod" GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw" BROWSERPROFILE_RESOLVE_ONLY=1

# NAME COMMAND...: runs COMMAND, its output kept in $work/NAME.log.
resolve() {
  local name="$1"
  shift
  if "$@" >"$work/$name.log" 2>&1; then echo ok >"$work/$name.status"; else echo failed >"$work/$name.status"; fi
}

start=$SECONDS
resolve terraform "$root/scripts/ensure-terraform.sh" 1.5.7 &
resolve tofu "$root/scripts/ensure-tofu.sh" &
resolve golangci-lint "$root/scripts/ensure-golangci-lint.sh" &
resolve goreleaser "$root/scripts/ensure-goreleaser.sh" &
# tfplugindocs runs as a tool of tools/go.mod (make docs).
resolve tfplugindocs bash -c 'cd "$1" && go list -modfile=tools/go.mod -deps github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs >/dev/null && echo "tfplugindocs (tools/go.mod)"' _ "$root" &
wait

failed=0
for name in terraform tofu golangci-lint goreleaser tfplugindocs; do
  if [ "$(cat "$work/$name.status")" = ok ]; then
    echo "ok    $(tail -n 1 "$work/$name.log") resolves from the module proxy alone"
    continue
  fi
  failed=1
  # go names a refused module as "MODULE@VERSION: reading URL: 403 Forbidden".
  refused="$(grep -oE '[^ :]+@v[^ :]+: (reading|verifying) [^ ]+: [0-9]{3} [A-Za-z ]+' "$work/$name.log" |
    sed -E 's/: (reading|verifying) [^ ]+: / (/; s/$/)/' | sort -u)"
  if [ -n "$refused" ]; then
    echo "FAIL  the module proxy refuses what $name's pinned version needs; pin another version:"
    sed 's/^/        /' <<<"$refused"
  else
    echo "FAIL  $name's pinned version does not resolve from the module proxy:"
    grep -v '^go: downloading ' "$work/$name.log" | tail -n 20 | sed 's/^/        /'
  fi
done
echo "tool pins checked in $((SECONDS - start)) s"
exit "$failed"
