#!/usr/bin/env bash
# Prints the path of goreleaser: the one on PATH, or else v2.15.1 (the newest
# that builds with Go 1.26) built once from the Go module proxy and cached.
set -euo pipefail
if command -v goreleaser >/dev/null 2>&1; then
  command -v goreleaser
  exit 0
fi
version=v2.15.1
cache="${BROWSERPROFILE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-browserprofile}/goreleaser-$version"
if [ ! -x "$cache/goreleaser" ]; then
  echo "building goreleaser $version from the Go module proxy into $cache (about 5 minutes, once)" >&2
  mkdir -p "$cache"
  GOBIN="$cache" GOFLAGS=-mod=mod go install "github.com/goreleaser/goreleaser/v2@$version" >&2
fi
echo "$cache/goreleaser"
