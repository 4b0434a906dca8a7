#!/usr/bin/env bash
# Run by goreleaser before anything is built (.goreleaser.yml, before.hooks),
# and by the release workflow before goreleaser: a release without both
# environments' base addresses would build, and every user of it would get
# "No base address" on the first plan. The provider checks the rest of each
# address (scheme, /api/v1) when it starts; this refuses only what cannot be
# an address at all.
set -euo pipefail
status=0
for var in BROWSERPROFILE_PRODUCTION_BASE_URL BROWSERPROFILE_DEVELOPMENT_BASE_URL; do
  value="${!var:-}"
  if [ -z "$value" ]; then
    echo "release refused: $var is unset or empty; a release builds it in as that environment's base address (set it, for the release workflow as a repository variable)" >&2
    status=1
  elif ! [[ "$value" =~ ^https?://[^/]+/.*api/v1/?$ ]]; then
    echo "release refused: $var is \"$value\", not an absolute address ending in /api/v1" >&2
    status=1
  fi
done
exit "$status"
