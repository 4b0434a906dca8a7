#!/usr/bin/env bash
# Usage: own-home.sh COMMAND...
# Runs COMMAND (make test's go test runs) with HOME a new, empty temporary
# directory, and fails if anything is left in it: tests write only in
# temporary directories of their own, never in the user's home or cache.
# Go's own settings, caches and the project's tool cache stay where they
# are; the XDG directories are unset, so that they too resolve under HOME.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
home="$(mktemp -d "${TMPDIR:-/tmp}/browserprofile-home.XXXXXX")"
trap 'rm -rf "$home"' EXIT
tools="$(tool_cache "")"
export GOENV="$(go env GOENV)" GOPATH="$(go env GOPATH)" GOCACHE="$(go env GOCACHE)" \
  GOMODCACHE="$(go env GOMODCACHE)" BROWSERPROFILE_TOOL_CACHE="${tools%/}"
status=0
env -u XDG_CACHE_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME HOME="$home" "$@" || status=$?
# The go command's own telemetry counters are no test's doing.
left="$(cd "$home" && find . -mindepth 1 ! -path './.config' ! -path './.config/go' ! -path './.config/go/telemetry*' | sort | head -n 20)"
if [ -n "$left" ]; then
  echo "the tests wrote in HOME, outside their temporary directories:" >&2
  sed 's/^/  /' <<<"$left" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
