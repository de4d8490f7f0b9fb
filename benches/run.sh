#!/usr/bin/env bash
# Every figure of benches/README.md's "Results" in one run: `fn-hcl bench` on each workload
# and mode, then the criterion stages. Run on a quiet machine from the repository root:
#   bash benches/run.sh [OUT_DIR]     (default: target/bench-results)
# The load generator is separate (see "How to run"): it needs a server running.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/bench-results}"
mkdir -p "$out"
pgo/build --bin fn-hcl
FN_HCL_WRITE_WORKLOADS="$out/workloads" cargo bench --bench pipeline
{ date -u; nproc; grep -m1 "model name" /proc/cpuinfo || true; uptime; } > "$out/machine.txt"
B=target/release/fn-hcl
: > "$out/fn-hcl-bench.txt"
for w in small fleet observed collection-200 collection-200-observed \
         heavy-200 heavy-200-observed services-500 scale-10 scale-100 scale-1000 scale-10000; do
  case $w in
    small|scale-10) n=2000 ;;
    observed|scale-1000) n=20 ;;
    scale-10000) n=3 ;;
    *) n=100 ;;
  esac
  for m in wire wire-eager handler eval; do
    printf '%s %s: ' "$w" "$m" >> "$out/fn-hcl-bench.txt"
    "$B" bench --request "$out/workloads/$w.json" --n "$n" --mode "$m" 2>&1 | tail -1 >> "$out/fn-hcl-bench.txt"
  done
  nc=$(( n > 500 ? 500 : n )); [[ $w == scale-10000 ]] && nc=2
  printf '%s cold: ' "$w" >> "$out/fn-hcl-bench.txt"
  "$B" bench --request "$out/workloads/$w.json" --n "$nc" --cold 2>&1 | tail -1 >> "$out/fn-hcl-bench.txt"
done
# Instructions per warm request (callgrind; exact, unlike the times on this VM).
if command -v valgrind >/dev/null; then
  { bash benches/callgrind.sh "$out/workloads" wire
    bash benches/callgrind.sh "$out/workloads" eval small fleet collection-200 heavy-200 heavy-200-observed services-500
    bash benches/callgrind.sh "$out/workloads" cold small collection-200 heavy-200
  } > "$out/callgrind.txt" 2>&1
else
  echo "valgrind not installed: no instruction counts" > "$out/callgrind.txt"
fi
FN_HCL_WORKLOADS=small,fleet,observed,collection-200,collection-200-observed,heavy-200,heavy-200-observed,services-500,scale-1000 \
  cargo bench --bench pipeline -- \
  "parse|compile|request_values|request_lazy|eval_warm|wire_warm|wire_eager_warm|wire_cold|protobuf_floor" \
  > "$out/criterion.txt" 2>&1
cargo bench --bench lsp -- --warm-up-time 1 --measurement-time 4 > "$out/lsp.txt" 2>&1
uptime >> "$out/machine.txt"
echo "results in $out/ (fn-hcl-bench.txt, callgrind.txt, criterion.txt, lsp.txt, machine.txt)"
