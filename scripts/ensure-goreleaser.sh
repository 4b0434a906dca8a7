#!/usr/bin/env bash
# Usage: ensure-goreleaser.sh [--version]
# Prints the path of goreleaser at the one version the project releases with
# (the release workflow asks this script for it too): the goreleaser on PATH
# if it is that version, or else that version built once from the Go module
# proxy and cached. --version prints the version alone.
#
# v2.17.1, the newest the go.mod toolchain builds (2.18 declares Go 1.27).
# 2.15.0 and 2.15.1 add the signature back into SHA256SUMS after signing it,
# so that no signature of theirs verifies and terraform init refuses every
# release (RELEASING.md). make install-test proves the pin: the release
# verified against its key alone, then init.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
version=v2.17.1
if [ "${1:-}" = --version ]; then
  echo "$version"
  exit 0
fi
if command -v goreleaser >/dev/null 2>&1 && goreleaser --version 2>/dev/null | grep -q "GitVersion: *${version#v}\$"; then
  command -v goreleaser
  exit 0
fi
go_install_cached goreleaser "$version" github.com/goreleaser/goreleaser/v2 "about 5 minutes"
