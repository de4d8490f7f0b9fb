#!/usr/bin/env python3
"""Where a warm request's instructions go, from two callgrind runs of `fn-hcl bench`.

Run the same request with `--n 1` and with `--n 1+K` under callgrind (`--dump-instr=no`);
the difference divided by K is one warm request (start-up, the compile of the first run
and the Fatal check cancel out, as in callgrind.sh):

    for n in 1 6; do valgrind --tool=callgrind --dump-instr=no \\
        --callgrind-out-file=/tmp/h$n.cg target/release/fn-hcl bench \\
        --request /tmp/wl/heavy-200.json --n $n --max-evaluation-time 10m; done

    benches/cgprofile.py functions /tmp/h1.cg /tmp/h6.cg 5        # self cost by function
    benches/cgprofile.py lines /tmp/h1.cg /tmp/h6.cg 5 Vm::run      # by source line, of
                                                                    # functions matching
    benches/cgprofile.py callees /tmp/h1.cg /tmp/h6.cg 5 write_output   # what it calls
    benches/cgprofile.py callers /tmp/h1.cg /tmp/h6.cg 5 mi_malloc      # who calls it
    benches/cgprofile.py calls /tmp/h1.cg /tmp/h6.cg 1000 mi_malloc     # call counts

Runs with `--dump-instr=yes` (the same views work on them) also give `atomics`: how many
atomic read-modify-write instructions (reference counts) a request executes, by function.
Callgrind counts one as one instruction though it costs the CPU ~20 cycles; here the
addresses of the binary's `lock` instructions (objdump) are weighed by how often each ran:

    benches/cgprofile.py atomics /tmp/i1.cg /tmp/i6.cg 5 --binary target/release/fn-hcl

`lines` groups inlined code under the function it was inlined into, by the source line
it came from (`file.rs:0` is code the compiler made: spills, moves). Calls' costs are
inclusive; recursion makes a function's inclusive cost meaningless, so `callees` and
`callers` give one call edge's cost, not a function's total. Only the standard library
(and objdump, for `atomics`).
"""

import argparse
import collections
import re
import subprocess

COST_LINE = re.compile(r"^[0-9+\-*]")
SPEC = re.compile(r"^(\w+)=(.*)$")
NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def position(tok, prev):
    """One sub-position of a cost line: `*` (as before), `+N`/`-N` (relative) or absolute,
    each number decimal or `0x` hex."""
    if tok == "*":
        return prev
    if tok[0] in "+-":
        return prev + int(tok, 0)
    return int(tok, 0)


def parse(path):
    """Self costs by (file, line, function, instruction address: 0 unless the run dumped
    instructions) and call edges (caller, callee): [cost, count]."""
    names = {"fl": {}, "fn": {}}
    selfc = collections.Counter()
    edges = collections.defaultdict(lambda: [0, 0])
    fl = fi = fn = cfn = None
    line = addr = 0
    instr = False  # `positions: instr line`: each cost line starts with an address
    pending = None  # the call count of a `calls=` line; its cost line follows
    with open(path, errors="replace") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw:
                continue
            if COST_LINE.match(raw):
                parts = raw.split()
                if instr:
                    addr = position(parts.pop(0), addr)
                if parts:
                    line = position(parts[0], line)
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending is not None:
                    edge = edges[(fn, cfn)]
                    edge[0] += cost
                    edge[1] += pending
                    pending = None
                else:
                    selfc[(fi or fl, line, fn, addr)] += cost
                continue
            if raw.startswith("positions:"):
                instr = "instr" in raw.split()
                continue
            m = SPEC.match(raw)
            if not m:
                continue
            key, val = m.groups()
            if key in ("fl", "fi", "fe", "fn", "cfl", "cfi", "cfn"):
                table = "fn" if key in ("fn", "cfn") else "fl"
                named = NAMED.match(val)
                if named:
                    ident, name = named.groups()
                    if name is not None:
                        names[table][ident] = name
                    val = names[table].get(ident, ident)
                if key == "fl":
                    fl, fi = val, None
                elif key in ("fi", "fe"):
                    fi = val
                elif key == "fn":
                    fn, fi = val, None
                elif key == "cfn":
                    cfn = val
            elif key == "calls":
                pending = int(val.split()[0])
    return selfc, edges


def diff(a, b, k):
    return {key: (b.get(key, 0) - a.get(key, 0)) / k for key in set(a) | set(b)}


def short(path):
    return path.split("/src/", 1)[-1] if "/src/" in path else path


def lock_addresses(binary):
    """The addresses of the binary's `lock`-prefixed instructions."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lock = re.compile(r"^\s*([0-9a-f]+):\s+lock\b")
    return {int(m.group(1), 16) for m in map(lock.match, out.splitlines()) if m}


def show(rows, n):
    rows = sorted(rows.items(), key=lambda kv: -kv[1])
    print(f"{'total':>14} {sum(v for _, v in rows):,.0f}")
    for label, v in rows[:n]:
        print(f"{v:14,.0f}  {label}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "view", choices=["functions", "lines", "callees", "callers", "calls", "atomics"]
    )
    ap.add_argument("one", help="callgrind output of the --n 1 run")
    ap.add_argument("more", help="callgrind output of the --n 1+K run")
    ap.add_argument("k", type=float, help="K: the extra requests (or any divisor)")
    ap.add_argument("match", nargs="?", default="", help="part of a function's name")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--binary", help="the binary the runs ran (for atomics)")
    args = ap.parse_args()
    if args.view == "atomics" and not args.binary:
        ap.error("atomics needs --binary")
    (self1, edges1), (self2, edges2) = parse(args.one), parse(args.more)
    if args.view in ("functions", "lines", "atomics"):
        d = diff(self1, self2, args.k)
        locks = lock_addresses(args.binary) if args.view == "atomics" else None
        if locks is not None and not any(addr for (_, _, _, addr) in d):
            ap.error("atomics needs runs with --dump-instr=yes")
        rows = collections.Counter()
        for (file, line, fn, addr), v in d.items():
            if args.match not in (fn or "") or (locks is not None and addr not in locks):
                continue
            rows[fn if args.view != "lines" else f"{short(file or '?')}:{line}"] += v
        show(rows, args.top)
        return
    i = 1 if args.view == "calls" else 0
    d = diff({e: c[i] for e, c in edges1.items()}, {e: c[i] for e, c in edges2.items()}, args.k)
    rows = collections.Counter()
    for (caller, callee), v in d.items():
        if args.view == "callees" and args.match in (caller or ""):
            rows[callee] += v
        elif args.view in ("callers", "calls") and args.match in (callee or ""):
            rows[f"{caller} -> {callee}"] += v
    show(rows, args.top)


if __name__ == "__main__":
    main()
