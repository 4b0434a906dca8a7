#!/usr/bin/env bash
# make bench-fleet, and make bench's (f): many plans at once on one machine
# (BenchmarkFleet in internal/e2e): K = 4, 8 and 16 plans, each the list and
# 40 profiles of its own through its own provider process, one token, behind
# one limit of 50 requests a second: a real nginx (limit_req, burst 10), a
# real HAProxy (a rate over any second, refusals counted), neither sending
# Retry-After, and the stand-in announcing a quota of 100 every 2 s, its
# reset in IETF's RateLimit (seconds from now, rounded up), GitHub's
# X-RateLimit-Reset (an epoch second, rounded up: "quota-github"; and
# "quota-opened", each window opened by the first request after the last
# one ended, as GitHub's are, where the others' windows fall at fixed
# times) or to the millisecond ("quota-precise"). The plans share their pace through one
# directory; the "apart" rows have nothing on disk in common (each plan its
# own home, cache, temporary and pace directories), as on machines of their
# own; the "redis" rows are apart but share one real Redis; the "aged" and
# "noise" rows give eight plans behind nginx a state left two days ago, and
# one overwritten with noise, to take up or heal; "K=1" is one plan alone,
# sharing on this machine or through a Redis 20 ms away. Each row: the
# fleet's time against the ideal (every request at 50 a second after
# Terraform's own time), the share of requests refused and the plans
# failed, medians of $BENCH_ROUNDS (default 3) fleets; and in brackets the
# span of the requests at the service, first to last, against every
# request at 50 a second, which leaves Terraform's own time out.
# BENCH_FLEET picks rows by go test -bench's pattern (default: all).
# Targets: K = 8 and 16, nginx and HAProxy <= 1.3x and <= 4% refused,
# shared on one machine or through Redis; a quota <= 1.2x and <= 1%,
# shared or apart; K = 4 <= 1.5x; nginx and HAProxy apart, K = 8, <= 20%
# refused; aged and noise as K = 8; one plan through a Redis 20 ms away
# <= 1.2x the same plan sharing locally; no plan fails anywhere. A failed
# plan fails the run; a missed target is shown as OVER.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${BENCH_ROUNDS:-3}"
cd "$root"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
TF_ACC=1 CHECKPOINT_DISABLE=1 TF_ACC_TERRAFORM_PATH="${TF_ACC_TERRAFORM_PATH:-$("$root/scripts/ensure-terraform.sh")}" \
  BROWSERPROFILE_NGINX="$("$root/scripts/ensure-debian.sh" nginx)" BROWSERPROFILE_HAPROXY="$("$root/scripts/ensure-debian.sh" haproxy)" \
  BROWSERPROFILE_REDIS_SERVER="$("$root/scripts/ensure-debian.sh" redis-server)" \
  go test -run '^$' -bench "${BENCH_FLEET:-Fleet}" -benchtime 1x -count "$rounds" -timeout 90m ./internal/e2e/ | tee "$out" |
  grep -E "^BenchmarkFleet/|own time" | sed 's/^ */  /'
# One line a row: its medians, its failed plans, and the verdict.
awk '
  /^BenchmarkFleet\// {
    name = $1; sub(/^BenchmarkFleet\//, "", name); sub(/-[0-9]+$/, "", name)
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    for (i = 3; i < NF; i++) {
      if ($(i + 1) == "x_ideal") ratio[name] = ratio[name] " " $i
      if ($(i + 1) == "x_span") span[name] = span[name] " " $i
      if ($(i + 1) == "%refused") refused[name] = refused[name] " " $i
      if ($(i + 1) == "failed") failed[name] += $i
    } }
  function median(list,   a, k, i, j, t) { k = split(list, a, " ")
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((k + 1) / 2)] + 0 }
  END {
    bad = 0
    for (r = 1; r <= n; r++) {
      name = order[r]; x = median(ratio[name]); s = median(refused[name])
      wantx = 1.3; wants = 4
      if (name ~ /^quota/) { wantx = 1.2; wants = 1 }
      if (name ~ /K=4$/) { wantx = 1.5; wants = 100 }
      if (name ~ /apart$/ && name !~ /^quota/) { wantx = 1000; wants = 20 }
      if (name ~ /K=1(\/|$)/) { wantx = 1000; wants = 100 }
      verdict = (x <= wantx && s <= wants) ? "PASS" : "OVER"
      if (failed[name] > 0) { verdict = "FAIL"; bad = 1 }
      t = ""
      if (wantx < 1000) t = sprintf("<= %.1fx", wantx)
      if (wants < 100) t = t (t == "" ? "" : ", ") sprintf("<= %d%% refused", wants)
      target = "target " (t == "" ? "no plan failed" : t)
      printf "  %-24s %5.2fx ideal %6.1f%% refused %3d plans failed  %s  (span %.2fx)  %s\n", name, x, s, failed[name], verdict, median(span[name]), target
      xs[name] = x
    }
    if (("nginx/K=1" in xs) && ("nginx/K=1/redis-20ms" in xs)) {
      x = xs["nginx/K=1/redis-20ms"] / xs["nginx/K=1"]
      printf "  %-24s %5.2fx sharing locally  %s\n", "one plan, Redis 20 ms", x, (x <= 1.2 ? "PASS" : "OVER")
    }
    exit bad
  }' "$out"
