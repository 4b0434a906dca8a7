#!/usr/bin/env bash
# Prints the path of golangci-lint v2, built once from the Go module proxy
# and cached outside the repository.
set -euo pipefail
version=v2.15.0
cache="${BROWSERPROFILE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-browserprofile}/golangci-lint-$version"
if [ ! -x "$cache/golangci-lint" ]; then
  echo "building golangci-lint $version from the Go module proxy into $cache (once)" >&2
  mkdir -p "$cache"
  GOBIN="$cache" GOFLAGS=-mod=mod go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version" >&2
fi
echo "$cache/golangci-lint"
