#!/usr/bin/env bash
# Usage: release-rehearsal.sh [--platforms OS_ARCH,...] VERSION OUT_DIR
#
# A release as the release workflow makes it, except publishing: the working
# tree (committed or not) is copied to a throwaway repository tagged
# vVERSION, and goreleaser runs `release --skip=publish` with the project's
# own .goreleaser.yml, signing SHA256SUMS with a throwaway GPG key made for
# the run in a temporary keyring. The workflow's own checks run on it:
# check-signing-key.sh before the build (the key is made for a day, so it is
# held to no 30 days), and verify-release.sh on the files a release uploads,
# against the throwaway public key alone. OUT_DIR receives the zips,
# SHA256SUMS, its .sig, the manifest, and the public key (signing-key.asc)
# with its long ID (signing-key.id), ready for a provider registry.
#
# --platforms cuts the configuration's targets to the platforms listed
# (comma-separated; "host" is this machine's), for the install tests;
# without it, every configured platform is built.
#
# BROWSERPROFILE_PRODUCTION_BASE_URL and BROWSERPROFILE_DEVELOPMENT_BASE_URL
# are built in, as in a release; goreleaser refuses to start without them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

platforms=""
if [ "${1:-}" = --platforms ]; then platforms="${2//host/$(go env GOOS)_$(go env GOARCH)}"; shift 2; fi
[ $# -eq 2 ] || { echo "usage: $0 [--platforms OS_ARCH,...] VERSION OUT_DIR" >&2; exit 2; }
version="$1"
out="$2"
command -v gpg >/dev/null || { echo "the rehearsal signs with gpg: apt-get install gnupg" >&2; exit 1; }
gr="$("$here/ensure-goreleaser.sh")"

work="$(mktemp -d "${TMPDIR:-/tmp}/browserprofile-release.XXXXXX")"
cleanup() {
  gpgconf --homedir "$work/gnupg" --kill all >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The tree as it is, git's ignored files left out, in a repository of its own.
mkdir "$work/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$work/src"
git -C "$work/src" init -q
git -C "$work/src" add -A
git -C "$work/src" -c user.name=rehearsal -c user.email=rehearsal@invalid commit -q -m "release rehearsal"
git -C "$work/src" tag "v$version"
# goreleaser reads the remote's address; nothing is pushed or fetched.
git -C "$work/src" remote add origin https://github.com/browserprofile/terraform-provider-browserprofile.git

# A throwaway key, in a keyring that dies with $work.
export GNUPGHOME="$work/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-generate-key "browserprofile release rehearsal <rehearsal@invalid>" rsa3072 sign 1d 2>/dev/null
fingerprint="$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')"
gpg --batch --armor --export "$fingerprint" >"$work/signing-key.asc"
GPG_FINGERPRINT="$fingerprint" "$here/check-signing-key.sh" --min-days 0 "$work/signing-key.asc"

config="$root/.goreleaser.yml"
if [ -n "$platforms" ]; then
  config="$work/goreleaser.yml"
  # The targets list is the one place .goreleaser.yml names platforms.
  awk -v list="$platforms" '
    /^    targets:/ { print; n = split(list, p, ","); for (i = 1; i <= n; i++) print "      - " p[i]; skip = 1; next }
    skip && /^      - / { next }
    { skip = 0; print }' "$root/.goreleaser.yml" >"$config"
  for p in ${platforms//,/ }; do
    grep -q "^      - $p\$" "$config" || { echo "no targets list to cut in .goreleaser.yml" >&2; exit 1; }
  done
fi

(cd "$work/src" && GPG_FINGERPRINT="$fingerprint" "$gr" release --clean --skip=publish,announce \
  --config "$config" --parallelism 2) >"$work/goreleaser.log" 2>&1 || {
  sed 's/^/  goreleaser: /' "$work/goreleaser.log" >&2
  echo "the release rehearsal failed: goreleaser refused (above)" >&2
  exit 1
}

dist="$work/src/dist"
sums="terraform-provider-browserprofile_${version}_SHA256SUMS"
# What the release uploads: the archives, SHA256SUMS and its signature, and
# the manifest under its release name (release.extra_files).
upload="$work/upload"
mkdir "$upload"
cp "$dist"/terraform-provider-browserprofile_"${version}"_*.zip "$dist/$sums" "$dist/$sums.sig" "$upload/"
cp "$work/src/terraform-registry-manifest.json" "$upload/terraform-provider-browserprofile_${version}_manifest.json"
"$here/verify-release.sh" "$version" "$upload" "$work/signing-key.asc" 2>"$work/verify.log" || {
  cat "$work/verify.log" >&2
  echo "the release rehearsal failed: the release did not verify (above)" >&2
  exit 1
}

mkdir -p "$out"
cp "$upload"/* "$out/"
cp "$work/signing-key.asc" "$out/signing-key.asc"
echo "${fingerprint: -16}" >"$out/signing-key.id"
echo "release $version rehearsed: $(wc -l <"$upload/$sums") files in $sums, verified against the key alone; artifacts in $out" >&2
