#!/usr/bin/env python3
"""How many atomic read-modify-write instructions one warm request executes, and where.

Callgrind counts an atomic reference count's `lock`-prefixed instruction as one, though it
costs the CPU ~20 cycles (it drains the store buffer): the instruction counts cannot show
them, and the software-clock profile of `perf.sh` smears them. This counts them exactly:
the addresses of every `lock` instruction of the binary (objdump), weighed by how often
each ran in two callgrind runs with per-instruction counts, `--n 1` and `--n 1+K`:

    for n in 1 6; do valgrind --tool=callgrind --dump-instr=yes \\
        --callgrind-out-file=/tmp/i$n.cg target/release/fn-hcl bench \\
        --request /tmp/wl/heavy-200.json --n $n --max-evaluation-time 10m; done
    benches/atomics.py target/release/fn-hcl /tmp/i1.cg /tmp/i6.cg 5

prints the count per warm request, then the functions that run them (where a drop or a
clone was inlined). Needs objdump (binutils); only the standard library.
"""

import argparse
import collections
import re
import subprocess

LOCK = re.compile(r"^\s*([0-9a-f]+):\s+lock\b")
NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def lock_addresses(binary):
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {int(m.group(1), 16) for m in map(LOCK.match, out.splitlines()) if m}


def counts(path, locks):
    """Executions of each lock instruction, by (address, function), in one callgrind file."""
    out = collections.Counter()
    names = {}
    addr = line = 0
    fn = None
    after_call = False

    def position(tok, prev):
        if tok == "*":
            return prev
        if tok.startswith("0x"):
            return int(tok, 16)
        if tok[0] in "+-":
            return prev + int(tok, 0 if tok[1:].startswith("0x") else 10)
        return int(tok)

    with open(path) as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw:
                continue
            if raw[0].isdigit() or raw[0] in "+-*":
                parts = raw.split()
                addr = position(parts[0], addr)
                if len(parts) > 2:
                    line = position(parts[1], line)
                cost = int(parts[-1]) if len(parts) > 1 else 0
                if after_call:  # a call's inclusive cost, not this instruction's
                    after_call = False
                elif addr in locks:
                    out[(addr, fn)] += cost
            elif raw.startswith("calls="):
                after_call = True
            elif raw.startswith("cfn="):  # a callee may name an id first
                m = NAMED.match(raw[4:])
                if m and m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
            elif raw.startswith("fn="):
                m = NAMED.match(raw[3:])
                if m:
                    ident, name = m.groups()
                    if name is not None:
                        names[ident] = name
                    fn = names.get(ident, ident)
                else:
                    fn = raw[3:]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("one", help="callgrind file of --n 1 (--dump-instr=yes)")
    p.add_argument("more", help="callgrind file of --n 1+K")
    p.add_argument("k", type=int, help="K, the requests the second run made more")
    p.add_argument("--top", type=int, default=15)
    a = p.parse_args()
    locks = lock_addresses(a.binary)
    x, y = counts(a.one, locks), counts(a.more, locks)
    by_fn = collections.Counter()
    for key in set(x) | set(y):
        by_fn[key[1]] += (y.get(key, 0) - x.get(key, 0)) / a.k
    print(f"{'per request':>14} {sum(by_fn.values()):,.0f}")
    for name, n in by_fn.most_common(a.top):
        print(f"{n:14,.0f}  {name}")


if __name__ == "__main__":
    main()
