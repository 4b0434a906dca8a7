#!/usr/bin/env bash
# make bench-record: runs the targets and switches that measure each area
# of BENCHMARKS.md and keeps each one's whole output in benchmarks/AREA.txt,
# headed by the commit it measured, the date and the machine; then make
# benchmarks writes BENCHMARKS.md from those files alone. Areas (all when
# none is named):
#
#   simulation  the pace in virtual time: TestPacer_unannounced, _announced
#               and _unlimited (-v), then PACE_BASELINE=1's tables (some
#               minutes; the same figures on any machine)
#   scale       the Redis store with K members (PACE_SCALE=1), three runs a
#               row, behind a bucket and an announced quota (half an hour)
#   schedule    the shared schedule's take with K runs (PACE_SCALE=1), steady
#               and disturbed, three runs a row (25 minutes)
#   limiters    make bench-limiters: one plan through Terraform behind real
#               nginx and HAProxy (BEFORE=<commit> runs that commit's
#               provider beside this tree's), some 20 minutes, 30 with BEFORE
#   bench       make bench: the list at scale, the stand-in's limiters through
#               Terraform and in process, the fleets (about 50 minutes)
#
# A file is written only once its command ended. Its header names HEAD, and
# says so where the code differs from it (make benchmarks takes only a
# committed tree's). A command that exits
# non-zero (make bench does when a core target is missed) is still
# recorded, with its status: a missed target is a figure too.
#
#   scripts/bench-record.sh [simulation|scale|schedule|limiters|bench]...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
areas=("$@")
[ ${#areas[@]} -gt 0 ] || areas=(simulation scale schedule limiters bench)
for area in "${areas[@]}"; do
  case "$area" in
    simulation | scale | schedule | limiters | bench) ;;
    *) echo "bench-record.sh: $area is none of simulation, scale, schedule, limiters, bench" >&2; exit 2 ;;
  esac
done
# A tree whose code differs from its commit is recorded as such: good for
# a comparison before committing (go run ./cmd/benchdoc -against HEAD),
# but make benchmarks refuses it, as no commit names what it measured.
code=(main.go go.mod go.sum internal cmd scripts GNUmakefile)
dirty=
if [ -n "$(git status --porcelain --untracked-files=no -- "${code[@]}")" ]; then
  dirty=yes
  echo "bench-record.sh: these files differ from HEAD, so the recording is marked uncommitted:" >&2
  git status --short --untracked-files=no -- "${code[@]}" >&2
fi

scale_tests() { # TIMEOUT PATTERN PACKAGE: its scale tests through a real Redis, three runs a row
  echo "\$ PACE_SCALE=1 PACE_SCALE_RUNS=3 go test -count=1 -v -timeout $1 -run '$2' $3"
  BROWSERPROFILE_REDIS_SERVER="$(scripts/ensure-debian.sh redis-server)" PACE_SCALE=1 PACE_SCALE_RUNS=3 \
    go test -count=1 -v -timeout "$1" -run "$2" "$3" 2>&1
}

run() { # AREA: the area's commands, their output on standard output
  case "$1" in
    simulation)
      echo "\$ go test -count=1 -v -run '^TestPacer_(unannounced|announced|unlimited)\$' ./internal/pace/"
      go test -count=1 -v -run '^TestPacer_(unannounced|announced|unlimited)$' ./internal/pace/ 2>&1
      echo "\$ PACE_BASELINE=1 go test -count=1 -v -timeout 60m -run '^TestBaseline_(rulesAgainstAWS|told)\$' ./internal/pace/"
      PACE_BASELINE=1 go test -count=1 -v -timeout 60m -run '^TestBaseline_(rulesAgainstAWS|told)$' ./internal/pace/ 2>&1
      ;;
    scale) scale_tests 120m '^TestScale_membersThroughOneRedis$' ./internal/paceredis/ ;;
    schedule) scale_tests 60m '^TestScale_takers(ThroughOneRedis|Disturbed)$' ./internal/schedule/ ;;
    limiters)
      echo "\$ make bench-limiters${BEFORE:+ BEFORE=$BEFORE}"
      scripts/bench-limiters.sh 2>&1
      ;;
    bench)
      echo "\$ make bench"
      scripts/bench.sh 2>&1
      ;;
  esac
}

mkdir -p benchmarks
tmp=
trap 'rm -f "$tmp"' EXIT
commit="$(git rev-parse HEAD)"
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)"
for area in "${areas[@]}"; do
  out="benchmarks/$area.txt"
  tmp="$(mktemp "benchmarks/.$area.XXXXXX")"
  echo "recording $area into $out" >&2
  {
    echo "# area: $area"
    echo "# commit: $commit $(git log -1 --format=%s "$commit")"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# machine: $(nproc) cores${cpu:+, $cpu}"
    [ -z "$dirty" ] || echo "# uncommitted: yes"
  } >"$tmp"
  began=$(date +%s)
  rc=0
  run "$area" | tee -a "$tmp" >&2 || rc=$?
  echo "# exit: $rc after $(($(date +%s) - began)) s" >>"$tmp"
  chmod 644 "$tmp"
  mv "$tmp" "$out"
  tmp=
done
