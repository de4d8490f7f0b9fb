#!/usr/bin/env bash
# Warm wire time of two or more builds, interleaved so that the machine's drift (±30% on
# this shared VM) falls on all of them alike; the minimum of ROUNDS runs per build:
#   bash benches/compare.sh WORKLOAD_DIR ROUNDS "WORKLOAD:N ..." BIN_A BIN_B [BIN...]
# e.g. bash benches/compare.sh /tmp/wl 7 "small:20000 heavy-200:300" main.bin new.bin
# prints one line per workload: each build's minimum in ns/op and its change against the
# first. Decide a change under ~3% with callgrind's counts, and by two sittings.
set -euo pipefail
dir="$1"; rounds="$2"; specs="$3"; shift 3
bins=("$@")
declare -A best
for ((r = 0; r < rounds; r++)); do
  for spec in $specs; do
    w="${spec%%:*}"; n="${spec##*:}"
    for b in "${bins[@]}"; do
      t=$("$b" bench --request "$dir/$w.json" --n "$n" | awk '/wire\/warm/ {print $3}')
      k="$w|$b"
      if [ -z "${best[$k]:-}" ] || [ "$t" -lt "${best[$k]}" ]; then best[$k]=$t; fi
    done
  done
done
for spec in $specs; do
  w="${spec%%:*}"
  line=$(printf '%-22s' "$w")
  first="${best[$w|${bins[0]}]}"
  for b in "${bins[@]}"; do
    t="${best[$w|$b]}"
    line+=$(awk -v t="$t" -v f="$first" 'BEGIN { printf " %12d ns %+6.1f%%", t, (t - f) * 100 / f }')
  done
  echo "$line"
done
