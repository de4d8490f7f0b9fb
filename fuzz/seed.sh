#!/usr/bin/env bash
# Builds the fuzz seed corpus in fuzz/corpus/<target>/ (not committed) from the HCL of the
# conformance cases and examples (../shared, or $FN_HCL_SHARED), the HCL snippets of tests/,
# the conformance requests encoded as RunFunctionRequest protobuf, and the committed seeds
# in fuzz/seeds/. Uses the main crate's test build (stable toolchain).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/fuzz/corpus"
mkdir -p "$out"
FUZZ_SEED_OUT="$out" cargo test --locked --test fuzz_regressions -- --ignored --exact write_seed_corpus --nocapture
for t in lex parse compile eval request structured; do
  mkdir -p "$out/$t"
  cp -n fuzz/seeds/$t/* "$out/$t/" 2>/dev/null || true
  echo "$t: $(ls "$out/$t" | wc -l) files in fuzz/corpus/$t"
done
