#!/usr/bin/env bash
# Prints the path of goreleaser: the one on PATH, or else v2.15.1 (the newest
# that builds with Go 1.26) built once from the Go module proxy and cached.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if command -v goreleaser >/dev/null 2>&1; then
  command -v goreleaser
  exit 0
fi
go_install_cached goreleaser v2.15.1 github.com/goreleaser/goreleaser/v2 "about 5 minutes"
