#!/usr/bin/env bash
# Usage: release-rehearsal.sh [--host-only] VERSION OUT_DIR
#
# A release as the release workflow makes it, except publishing: the working
# tree (committed or not) is copied to a throwaway repository tagged
# vVERSION, and goreleaser runs `release --skip=publish` with the project's
# own .goreleaser.yml, signing SHA256SUMS with a throwaway GPG key made for
# the run in a temporary keyring. Then gpg --verify checks the signature,
# sha256sum -c the archives, and SHA256SUMS is checked to list exactly the
# archives and the manifest. OUT_DIR receives the zips, SHA256SUMS, its .sig,
# the manifest, and the public key (signing-key.asc) with its long ID
# (signing-key.id), ready for a provider registry.
#
# --host-only cuts the configuration's targets to this machine's platform, for
# the install test; without it, every configured platform is built.
#
# BROWSERPROFILE_PRODUCTION_BASE_URL and BROWSERPROFILE_DEVELOPMENT_BASE_URL
# are built in, as in a release; goreleaser refuses to start without them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

host_only=false
if [ "${1:-}" = --host-only ]; then host_only=true; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--host-only] VERSION OUT_DIR" >&2; exit 2; }
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

config="$root/.goreleaser.yml"
if $host_only; then
  platform="$(go env GOOS)_$(go env GOARCH)"
  config="$work/goreleaser.yml"
  # The targets list is the one place .goreleaser.yml names platforms.
  awk -v p="$platform" '
    /^    targets:/ { print; print "      - " p; skip = 1; next }
    skip && /^      - / { next }
    { skip = 0; print }' "$root/.goreleaser.yml" >"$config"
  grep -q "^      - $platform\$" "$config" || { echo "no targets list to cut in .goreleaser.yml" >&2; exit 1; }
fi

(cd "$work/src" && GPG_FINGERPRINT="$fingerprint" "$gr" release --clean --skip=publish,announce \
  --config "$config" --parallelism 2) >"$work/goreleaser.log" 2>&1 || {
  sed 's/^/  goreleaser: /' "$work/goreleaser.log" >&2
  echo "the release rehearsal failed: goreleaser refused (above)" >&2
  exit 1
}

dist="$work/src/dist"
sums="terraform-provider-browserprofile_${version}_SHA256SUMS"
gpg --batch --verify "$dist/$sums.sig" "$dist/$sums" 2>"$work/verify.log" || {
  cat "$work/verify.log" >&2
  echo "the release rehearsal failed: gpg --verify refused $sums.sig" >&2
  exit 1
}
# The release uploads the manifest under this name (release.extra_files).
cp "$work/src/terraform-registry-manifest.json" "$dist/terraform-provider-browserprofile_${version}_manifest.json"
(cd "$dist" && sha256sum --quiet -c "$sums")
listed="$(awk '{ print $2 }' "$dist/$sums" | sort)"
expected="$(cd "$dist" && ls -1 terraform-provider-browserprofile_"${version}"_*.zip "terraform-provider-browserprofile_${version}_manifest.json" | sort)"
[ "$listed" = "$expected" ] || {
  printf 'the release rehearsal failed: %s lists\n%s\nbut the release holds\n%s\n' "$sums" "$listed" "$expected" >&2
  exit 1
}

mkdir -p "$out"
cp "$dist/$sums" "$dist/$sums.sig" $(awk -v d="$dist/" '{ print d $2 }' "$dist/$sums") "$out/"
gpg --batch --armor --export "$fingerprint" >"$out/signing-key.asc"
echo "${fingerprint: -16}" >"$out/signing-key.id"
echo "release $version rehearsed: $(echo "$listed" | wc -l) files in $sums, signature verified; artifacts in $out" >&2
