#!/usr/bin/env bash
# What one collection member pays for each construct of its template (callgrind, exact):
#   FN_HCL_WRITE_WORKLOADS=DIR cargo bench --bench pipeline   # writes DIR/construct-*.json
#   bash benches/constructs.sh DIR [MODE]
# For each `construct-X` workload (benches/workloads/mod.rs: `construct-base` plus one
# construct in the template), prints the instructions of one warm request and
# (I(X) - I(base)) / 200: the construct's cost per member. MODE is eval (default: the
# evaluation alone) or wire. Needs valgrind and a release build (FN_HCL_BIN=path to
# measure another binary).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$1"; mode="${2:-eval}"
B="${FN_HCL_BIN:-target/release/fn-hcl}"
items=200
instr() { # request n
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" bench --request "$1" \
    --n "$2" --mode "$mode" --max-evaluation-time 10m 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_request() { # request
  local a b
  a=$(instr "$1" 1); b=$(instr "$1" 4)
  echo $(( (b - a) / 3 ))
}
if [ ! -f "$dir/construct-base.json" ]; then
  echo "no $dir/construct-base.json: write the workloads first (see above)" >&2
  exit 1
fi
base=$(per_request "$dir/construct-base.json")
printf '%-28s %12s %14s\n' workload "instr/request" "per member"
printf '%-28s %12d %14s\n' construct-base "$base" "(base)"
for f in "$dir"/construct-*.json; do
  w=$(basename "$f" .json)
  [ "$w" = construct-base ] && continue
  i=$(per_request "$f")
  printf '%-28s %12d %14d\n' "$w" "$i" $(( (i - base) / items ))
done
