#!/usr/bin/env bash
# Run by goreleaser before anything is built (.goreleaser.yml, before.hooks),
# and by the release workflow before goreleaser: a release without both
# environments' base addresses would build, and every user of it would get
# "No base address" on the first plan. The provider checks the rest of each
# address (scheme, /api/v1) when it starts; this refuses only what cannot be
# an address at all.
#
# With PUBLIC_KEY (the release workflow passes signing-key.asc), it also
# refuses when no public signing key is committed there: the release is
# verified against that key before it is published, so none is made without.
set -euo pipefail
status=0
if [ $# -gt 0 ] && [ ! -s "$1" ]; then
  echo "release refused: no public signing key is committed at $1; the release is verified against it before it is published, so a maintainer commits the signing key's ASCII-armored public half there first (RELEASING.md, \"The signing key\")" >&2
  status=1
fi
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
