#!/usr/bin/env bash
# Holds .goreleaser.yml's targets to the Go toolchain and to the registry's
# users: every configured platform must be one `go tool dist list` builds
# (a release that asks for another fails on the tag, after everything else
# was built), and every platform Terraform providers are released for
# (darwin amd64 and arm64; freebsd, linux and windows on 386, amd64, arm and
# arm64) that the toolchain builds must be configured.
set -euo pipefail
cd "$(dirname "$0")/.."
configured="$(awk '/^    targets:/ { on = 1; next } on && /^      - / { print $2; next } { on = 0 }' .goreleaser.yml | sort)"
[ -n "$configured" ] || { echo ".goreleaser.yml has no targets list" >&2; exit 1; }
builds="$(go tool dist list | tr / _ | sort)"
wanted="darwin_amd64 darwin_arm64"
for os in freebsd linux windows; do
  for arch in 386 amd64 arm arm64; do wanted="$wanted ${os}_$arch"; done
done
status=0
for p in $configured; do
  grep -qx "$p" <<<"$builds" || { echo ".goreleaser.yml builds $p, which $(go env GOVERSION) cannot build (go tool dist list): remove it" >&2; status=1; }
done
for p in $wanted; do
  if grep -qx "$p" <<<"$builds" && ! grep -qx "$p" <<<"$configured"; then
    echo ".goreleaser.yml does not build $p, a platform the registry's users run that $(go env GOVERSION) builds: add it" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "release platforms: $(echo $configured | wc -w), each one $(go env GOVERSION) builds"
exit "$status"
