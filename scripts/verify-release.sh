#!/usr/bin/env bash
# Usage: verify-release.sh VERSION DIR PUBLIC_KEY
#
# Checks a release's files as a registry and `terraform init` will, before
# the release is published: DIR holds what was uploaded (the release
# workflow downloads its draft's assets back; the rehearsal passes
# goreleaser's output). In a fresh keyring holding only PUBLIC_KEY (the
# public key committed in the repository, which the registries serve):
#
# - VERSION is a semantic version (the tag less its "v"), as the registries
#   require of a provider's versions;
# - SHA256SUMS.sig is a binary (not ASCII-armoured) detached signature, the
#   form the Terraform Registry takes, and a good signature of SHA256SUMS by
#   that key;
# - every file SHA256SUMS lists is in DIR with that hash;
# - SHA256SUMS lists exactly the zips and the manifest in DIR, and DIR holds
#   nothing else besides SHA256SUMS and its signature.
#
# Each problem is named; the exit status is 1 if there is any.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 VERSION DIR PUBLIC_KEY" >&2; exit 2; }
version="$1"
dir="$2"
public="$3"
prefix="terraform-provider-browserprofile_${version}"
sums="${prefix}_SHA256SUMS"

fail() { echo "release $version refused: $*" >&2; exit 1; }

# semver.org's grammar, but for its rule against leading zeros in numeric
# pre-release identifiers.
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[[ "$version" =~ $semver ]] || fail "the tag v$version is not a semantic version (vMAJOR.MINOR.PATCH): the registries would not list it"
[ -s "$public" ] || fail "no public key at $public to verify against"
[ -f "$dir/$sums" ] || fail "$dir has no $sums"
[ -f "$dir/$sums.sig" ] || fail "$dir has no $sums.sig"

# A binary signature is an OpenPGP packet, whose first byte has its top bit
# set; an armoured one starts with "-----BEGIN PGP SIGNATURE-----", which gpg
# verifies as well, but the registry does not take.
first="$(head -c 1 "$dir/$sums.sig" | od -An -tu1 | tr -d ' ')"
[ "${first:-0}" -ge 128 ] || fail "$sums.sig is not a binary OpenPGP signature (ASCII-armoured?): the registry takes a binary one (gpg --detach-sign, without --armor)"

ring="$(mktemp -d "${TMPDIR:-/tmp}/browserprofile-verify.XXXXXX")"
trap 'gpgconf --homedir "$ring" --kill all >/dev/null 2>&1 || true; rm -rf "$ring"' EXIT
chmod 700 "$ring"
GNUPGHOME="$ring" gpg --batch --quiet --import "$public" 2>/dev/null || fail "$public holds no OpenPGP public key gpg can import"
# --status-fd: VALIDSIG is said only for a good signature by a key in the
# keyring, whatever the exit status of an expired key's signature.
status="$(GNUPGHOME="$ring" gpg --batch --status-fd 1 --verify "$dir/$sums.sig" "$dir/$sums" 2>"$ring/verify.log" || true)"
grep -q '^\[GNUPG:\] VALIDSIG ' <<<"$status" || {
  sed 's/^/  gpg: /' "$ring/verify.log" >&2
  fail "$sums.sig is not a good signature of $sums by the key in $public"
}

problems=()
listed="$(awk '{ print $2 }' "$dir/$sums" | sed 's/^\*//' | sort)"
while read -r hash name; do
  name="${name#\*}"
  if [ ! -f "$dir/$name" ]; then
    problems+=("$sums lists $name, which the release does not hold")
  elif [ "$(sha256sum "$dir/$name" | cut -d' ' -f1)" != "$hash" ]; then
    problems+=("$name does not have the hash $sums gives it")
  fi
done <"$dir/$sums"

held="$(cd "$dir" && find . -maxdepth 1 -type f ! -name "$sums" ! -name "$sums.sig" -printf '%f\n' | sort)"
expected="$(grep -E "^${prefix}_[a-z0-9]+_[a-z0-9]+\.zip\$|^${prefix}_manifest\.json\$" <<<"$held" || true)"
grep -qx "${prefix}_manifest.json" <<<"$held" || problems+=("the release holds no ${prefix}_manifest.json")
grep -q '\.zip$' <<<"$expected" || problems+=("the release holds no ${prefix}_<os>_<arch>.zip")
while read -r name; do
  [ -n "$name" ] || continue
  grep -qxF "$name" <<<"$expected" || problems+=("the release holds $name, which is neither a ${prefix} zip nor its manifest")
  grep -qxF "$name" <<<"$listed" || problems+=("$sums does not list $name")
done <<<"$held"

if [ ${#problems[@]} -gt 0 ]; then
  printf "release $version refused: %s\n" "${problems[@]}" >&2
  exit 1
fi
echo "release $version verified: $sums signed by the key in $public, $(wc -l <"$dir/$sums") files listed and matching" >&2
