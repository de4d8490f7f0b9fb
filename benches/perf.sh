#!/usr/bin/env bash
# Where a warm request's time goes, as sampled, not counted: callgrind counts instructions,
# which cannot see a load that waits (a value written in pieces and read back whole: a
# store-forwarding stall), a mispredicted branch or an atomic reference count. This machine
# has no hardware counters for perf, but its software clock samples work:
#   bash benches/perf.sh WORKLOAD_DIR WORKLOAD [N] [SYMBOL]
# prints the functions by their own share of the samples, then the hottest instructions of
# SYMBOL (default: the VM's loop) with the source lines around each one. FN_HCL_BIN=path
# profiles another binary. Needs perf (Debian: linux-perf) and a release build.
set -eu  # no pipefail: `head` ends the pipelines below early on purpose
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bash benches/perf.sh WORKLOAD_DIR WORKLOAD [N] [SYMBOL]" >&2
  exit 2
fi
dir="$1"; w="$2"; n="${3:-2000}"; sym="${4:-fn_hcl::bytecode::vm::Vm::run}"
B="${FN_HCL_BIN:-target/release/fn-hcl}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
data="$tmp/perf.data"
perf record -q -e cpu-clock -F 20000 -o "$data" "$B" bench --request "$dir/$w.json" --n "$n" >/dev/null
echo "== functions by their own samples"
perf report -i "$data" --no-children --sort symbol --stdio 2>/dev/null | grep '%' | head -30 | cut -c1-140
echo "== the hottest instructions of $sym (skid: a stalled load shows on the instruction after it)"
perf annotate -i "$data" --stdio -s "$sym" 2>/dev/null > "$data.ann"
grep -E '^\s+[0-9]+\.[0-9]+ :' "$data.ann" | sort -rn | head -12 | while read -r pct _ addr _; do
  echo "-- $pct% at ${addr%:}"
  grep -n -m1 " ${addr}" "$data.ann" | cut -d: -f1 | { read -r l; sed -n "$((l > 14 ? l - 14 : 1)),${l}p" "$data.ann"; } \
    | grep -E '^\s+: [0-9]+ +[^ ]|[0-9]\.[0-9]+ :' | grep -v '^\s*0\.00 :' | tail -8 | cut -c1-140
done
