#!/usr/bin/env bash
# Usage: check-signing-key.sh [--min-days N] PUBLIC_KEY
#
# Run before anything is built: the key that will sign SHA256SUMS (the key
# GPG_FINGERPRINT names, a subkey or a primary key, in the keyring GNUPGHOME
# names) must be one the registries and every supported CLI accept:
#
# - RSA or DSA: the Terraform Registry takes no other kind (gpg makes ECC
#   keys by default);
# - neither it nor its primary key revoked, expired, or expiring within N
#   days (30 unless --min-days says otherwise): Terraform 1.6.0 refuses every
#   release signed by a key that has since expired;
# - in PUBLIC_KEY, the public key committed in the repository, which is the
#   one the registries serve and the published release is verified against.
#
# Each problem is named on its own line; the exit status is 1 if there is any.
set -euo pipefail

min_days=30
if [ "${1:-}" = --min-days ]; then min_days="$2"; shift 2; fi
[ $# -eq 1 ] || { echo "usage: $0 [--min-days N] PUBLIC_KEY" >&2; exit 2; }
public="$1"

fail() { echo "signing key refused: $*" >&2; exit 1; }

[ -s "$public" ] || fail "no public key is committed at $public; a release is verified against it before it is published, so commit the signing key's ASCII-armored public half there first (RELEASING.md, \"The signing key\")"
fpr="${GPG_FINGERPRINT:-}"
fpr="${fpr// /}"
[ -n "$fpr" ] || fail "GPG_FINGERPRINT is unset; it names the key (or subkey) that signs SHA256SUMS"
fpr="${fpr^^}"

# The secret key's records in gpg's colon format: a sec (primary) or ssb
# (subkey) line, then its fpr line. Fields: 2 validity, 4 algorithm, 7 expiry
# (seconds since the epoch, empty for none), 12 capabilities.
listing="$(gpg --batch --with-colons --fixed-list-mode --list-secret-keys "$fpr" 2>/dev/null)" ||
  fail "no secret key for $fpr in the keyring (GPG_FINGERPRINT names the key that signs)"

now="$(date +%s)"
problems=()
# check_key KIND FPR VALIDITY ALGO EXPIRY: one key's problems, if any.
check_key() {
  local what="$1 $2"
  case "$4" in
    1 | 3 | 17) ;;
    *) problems+=("$what is not RSA or DSA (OpenPGP algorithm $4); the Terraform Registry takes only RSA or DSA keys") ;;
  esac
  if [ "$3" = r ]; then
    problems+=("$what is revoked")
  fi
  if [ -n "$5" ]; then
    local until
    until="$(date -u -d "@$5" +%Y-%m-%d)"
    if [ "$5" -le "$now" ]; then
      problems+=("$what expired on $until; Terraform 1.6.0 refuses every release signed by an expired key")
    elif [ "$5" -le $((now + min_days * 86400)) ]; then
      problems+=("$what expires on $until, within $min_days days; extend it (gpg --quick-set-expire) or rotate it (RELEASING.md)")
    fi
  fi
}

# The named key and the primary key it belongs to (whose expiry and
# revocation bound every subkey). When the primary is named, gpg signs with
# its newest signing subkey, if it has one: each signing-capable subkey is
# checked too. awk joins each key's line to its fpr line:
# KIND VALIDITY ALGO EXPIRY CAPABILITIES FINGERPRINT, "-" for an empty field.
named=false
primary_named=false
while read -r type validity algo expiry caps this; do
  [ "$expiry" = - ] && expiry=""
  kind=subkey
  [ "$type" = sec ] && kind="primary key"
  if [ "$this" = "$fpr" ]; then
    named=true
    [ "$type" = sec ] && primary_named=true
  elif [ "$type" = ssb ] && ! { $primary_named && [[ "$caps" == *s* ]]; }; then
    continue
  fi
  check_key "$kind" "$this" "$validity" "$algo" "$expiry"
done < <(printf '%s\n' "$listing" | awk -F: '
  $1 == "sec" || $1 == "ssb" { key = $1 " " ($2 == "" ? "-" : $2) " " $4 " " ($7 == "" ? "-" : $7) " " ($12 == "" ? "-" : $12) }
  $1 == "fpr" && key != "" { print key, $10; key = "" }')
$named || fail "no secret key or subkey in the keyring has the fingerprint $fpr"

# The committed public key, read in a keyring of its own.
ring="$(mktemp -d "${TMPDIR:-/tmp}/browserprofile-key.XXXXXX")"
trap 'gpgconf --homedir "$ring" --kill all >/dev/null 2>&1 || true; rm -rf "$ring"' EXIT
chmod 700 "$ring"
GNUPGHOME="$ring" gpg --batch --quiet --import "$public" 2>/dev/null || fail "$public holds no OpenPGP public key gpg can import"
if ! GNUPGHOME="$ring" gpg --batch --with-colons --fixed-list-mode --list-keys 2>/dev/null |
  awk -F: -v f="$fpr" '$1 == "fpr" && $10 == f { found = 1 } END { exit !found }'; then
  problems+=("key $fpr is not in $public, the committed public key the release is verified against")
fi

if [ ${#problems[@]} -gt 0 ]; then
  printf 'signing key refused: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "signing key $fpr: RSA or DSA, not expiring within $min_days days, and in $public" >&2
