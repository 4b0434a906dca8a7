#!/usr/bin/env bash
# Usage: ensure-goreleaser.sh [--version]
# Prints the path of goreleaser at the one version the project releases with:
# the goreleaser on PATH if it is that version, or else that version built
# once from the Go module proxy and cached. The release workflow builds its
# goreleaser through this script too, so that a release is made by the very
# binary make release-check and make install-test exercised. --version
# prints the version alone.
#
# v2.16.0, on this evidence (RELEASING.md, "The goreleaser version"):
# - its whole module graph downloads into an empty module cache
#   (scripts/check-tool-pins.sh, in make test);
# - v2.17.0 and v2.17.1 do not: through nfpm v2.47.0 they need
#   go.digitalxero.dev/go-msix, which the proxy refuses (403), so they build
#   only where a module cache already holds it;
# - v2.15.0 and v2.15.1 add the signature back into SHA256SUMS after signing
#   it, so that no signature of theirs verifies and terraform init refuses
#   every release; fixed in v2.15.2;
# - v2.18 and later declare a newer Go than the go.mod toolchain.
# make install-test proves the pin: the release verified against its key
# alone, then installed with terraform init and tofu init.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
version=v2.16.0
if [ "${1:-}" = --version ]; then
  echo "$version"
  exit 0
fi
if ! resolve_only && command -v goreleaser >/dev/null 2>&1 &&
  goreleaser --version 2>/dev/null | grep -q "GitVersion: *${version#v}\$"; then
  command -v goreleaser
  exit 0
fi
go_install_cached goreleaser "$version" github.com/goreleaser/goreleaser/v2 "about 5 minutes"
