#!/usr/bin/env bash
# make bench-limiters: one plan of the list and 300 reads through Terraform
# behind real limiters of 50 a second (BenchmarkRealLimiters in
# internal/e2e): nginx's limit_req with a burst of 10, a burst of 20 queued
# and none, and HAProxy's http_req_rate, on loopback and behind a real
# 80 ms round trip, with and without Retry-After. Each row: the median and
# worst of $BENCH_ROUNDS plans (default 5) against the ideal, and the
# median share refused, beside the same plans told the limit
# (requests_per_second = 50): what learning it costs. BENCH_LIMITERS picks rows by a regular expression
# on "limiter, network" (default: all); BENCH_LOGS, a directory, keeps
# each plan's provider log at debug. With a commit (the first argument, or
# BEFORE), the provider built from it runs every plan too, just before
# this tree's: side by side in one run, some 30 minutes on 2 cores (20
# without).
# The targets are printed with the table (limiters_test.go).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
before="${1:-${BEFORE:-}}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The test runs in its package's directory: a log directory named from
# here is made absolute first.
if [ -n "${BENCH_LOGS:-}" ]; then
  BENCH_LOGS="$(realpath -m "$BENCH_LOGS")"
  export BENCH_LOGS
fi
cd "$root"
if [ -n "$before" ]; then
  # The commit's tree, not a worktree: nothing is left in the repository.
  mkdir -p "$tmp/src"
  git archive "$before" | tar -x -C "$tmp/src"
  (cd "$tmp/src" && go build -o "$tmp/before/terraform-provider-browserprofile" .)
  export BENCH_BEFORE="$tmp/before"
fi
TF_ACC=1 CHECKPOINT_DISABLE=1 TF_ACC_TERRAFORM_PATH="${TF_ACC_TERRAFORM_PATH:-$("$root/scripts/ensure-terraform.sh")}" \
  BROWSERPROFILE_NGINX="$("$root/scripts/ensure-debian.sh" nginx)" BROWSERPROFILE_HAPROXY="$("$root/scripts/ensure-debian.sh" haproxy)" \
  go test -run '^$' -bench 'RealLimiters' -benchtime 1x -timeout 90m -v ./internal/e2e/
