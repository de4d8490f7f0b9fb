#!/usr/bin/env bash
# Instructions per warm request (callgrind), exact and repeatable on any machine:
#   bash benches/callgrind.sh WORKLOAD_DIR [MODE] [WORKLOAD...]
# runs `fn-hcl bench --n 1` and `--n 1+K` under callgrind for each workload and prints
# (I(1+K) - I(1)) / K, so start-up, the first (compiling) run and the Fatal check cancel.
# MODE is wire (default), eval, handler or cold. Needs valgrind and a release build
# (FN_HCL_BIN=path measures another binary, e.g. a build of main to compare with).
# Evaluations may take 10 minutes (under callgrind a request runs ~50x slower, and the
# default 1 s budget would end the large workloads early with a Fatal result).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$1"; mode="${2:-wire}"; shift $(( $# >= 2 ? 2 : 1 ))
B="${FN_HCL_BIN:-target/release/fn-hcl}"
ws=("$@")
[ ${#ws[@]} -eq 0 ] && ws=(small fleet observed collection-200 collection-200-observed \
  heavy-200 heavy-200-observed services-500 scale-10 scale-100 scale-1000)
instr() { # request n
  local args=(bench --request "$1" --n "$2" --max-evaluation-time 10m)
  if [ "$mode" = cold ]; then args+=(--cold); else args+=(--mode "$mode"); fi
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" "${args[@]}" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for w in "${ws[@]}"; do
  case $w in observed|scale-1000) k=2 ;; small|scale-10) k=20 ;; *) k=5 ;; esac
  a=$(instr "$dir/$w.json" 1); b=$(instr "$dir/$w.json" $((1 + k)))
  printf '%-26s %-6s %14d instructions/op\n' "$w" "$mode" $(( (b - a) / k ))
done
