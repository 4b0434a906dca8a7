#!/usr/bin/env bash
# Prints the path of an OpenTofu binary of the current line (1.12), built
# once from the Go module proxy (about 7 minutes) and cached outside the
# repository. OpenTofu's module has replace directives, so `go install`
# refuses it: the module is downloaded and built in place. Its whole module
# graph downloads into an empty module cache (scripts/check-tool-pins.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
version=v1.12.6
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"

# source_dir: the directory of OpenTofu's module, downloaded into GOMODCACHE.
source_dir() {
  local dir
  dir="$(go mod download -json "github.com/opentofu/opentofu@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$dir" ] || { echo "go mod download gave no directory for OpenTofu $version" >&2; return 1; }
  echo "$dir"
}

if resolve_only; then
  # scripts/check-tool-pins.sh: every module the build loads, fetched into
  # GOMODCACHE, and nothing built.
  dir="$(source_dir)"
  (cd "$dir" && go list -deps ./cmd/tofu >/dev/null)
  echo "tofu $version"
  exit 0
fi
cache="$(tool_cache "tofu-$version-release")"
if [ ! -x "$cache/tofu" ]; then
  echo "building OpenTofu $version from the Go module proxy into $cache (about 7 minutes, once)" >&2
  dir="$(source_dir)"
  mkdir -p "$cache"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/opentofu/opentofu/version.dev=no" -o "$cache/tofu.tmp" ./cmd/tofu) >&2
  mv "$cache/tofu.tmp" "$cache/tofu"
fi
echo "$cache/tofu"
