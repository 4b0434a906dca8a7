#!/usr/bin/env bash
# Usage: ensure-terraform.sh [1.5.7]
# Prints the path of a terraform binary: the one on PATH, or else (and always
# when the version is given) Terraform 1.5.7 built once from the Go module
# proxy (about 5 minutes) and cached outside the repository. Nothing is
# downloaded from anywhere else.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ $# -eq 0 ] && command -v terraform >/dev/null 2>&1; then
  command -v terraform
  exit 0
fi
version="${1:-1.5.7}"
[ "$version" = 1.5.7 ] || { echo "ensure-terraform.sh builds Terraform 1.5.7 only (the last release under MPL, installable with go install)" >&2; exit 2; }
go_install_cached terraform "v$version" github.com/hashicorp/terraform "about 6 minutes"
