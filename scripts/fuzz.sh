#!/usr/bin/env bash
# Runs every fuzz test in the module for FUZZTIME each, a time or a count
# of inputs such as 20000x (go test fuzzes one test at a time): beyond the seed corpora that go test ./... runs, new
# inputs for the decoders, the masking and the pacer's invariants. A
# failing input is kept under the package's testdata/fuzz, to commit with
# its fix as a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-1m}"
git grep -E '^func Fuzz[A-Za-z0-9_]*\(' -- '*_test.go' | while IFS=: read -r file line; do
  name="${line#func }"
  name="${name%%(*}"
  echo "fuzzing $name ($file) for $fuzztime"
  go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "./$(dirname "$file")"
done
