#!/usr/bin/env bash
# Usage: release-publish.sh TAG PUBLIC_KEY
#
# The release workflow's last step: finds the one draft release of TAG that
# goreleaser made, downloads that draft's assets by its id, verifies them
# (verify-release.sh, against PUBLIC_KEY alone) and publishes that same
# draft by its id. Looking the draft up once, by id, means that what is
# published is what was verified, even if another draft of the tag appears
# meanwhile; the workflow's concurrency group runs one release of a tag at a
# time, and more than one draft of TAG is refused rather than guessed at.
#
# Needs gh, GH_TOKEN and GITHUB_REPOSITORY (owner/name), as in the workflow.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TAG PUBLIC_KEY" >&2; exit 2; }
tag="$1"
public="$2"
here="$(cd "$(dirname "$0")" && pwd)"
repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY names the repository (owner/name)}"

ids="$(TAG="$tag" gh api --paginate "repos/$repo/releases?per_page=100" \
  --jq '.[] | select(.draft and .tag_name == env.TAG) | .id')"
count="$(grep -c . <<<"$ids" || true)"
[ "$count" -eq 1 ] || {
  echo "release $tag refused: $count draft releases of $tag, where goreleaser makes exactly one; delete the stale drafts and run the workflow again" >&2
  exit 1
}
id="$ids"

dir="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/draft.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
while IFS=$'\t' read -r asset name; do
  # A name is a file name in $dir, and nothing else.
  [[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] || {
    echo "release $tag refused: the draft holds an asset named \"$name\", which no release of this project makes" >&2
    exit 1
  }
  gh api -H 'Accept: application/octet-stream' "repos/$repo/releases/assets/$asset" >"$dir/$name"
done < <(gh api --paginate "repos/$repo/releases/$id/assets?per_page=100" --jq '.[] | [.id, .name] | @tsv')

"$here/verify-release.sh" "${tag#v}" "$dir" "$public"
gh api --silent -X PATCH "repos/$repo/releases/$id" -F draft=false
echo "release $tag published: the draft $id, as verified" >&2
