#!/usr/bin/env bash
# Prints the path of golangci-lint v2, built once from the Go module proxy
# and cached outside the repository.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
go_install_cached golangci-lint v2.15.0 github.com/golangci/golangci-lint/v2/cmd/golangci-lint "about 3 minutes"
