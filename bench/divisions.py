#!/usr/bin/env python3
"""Divisions executed inside the event loop, per instruction, from a callgrind profile.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=X.cg --collect-atstart=no \
        --toggle-collect='*bench::event_loop*' target/release/examples/bench --count NAME
    bench/divisions.py X.cg target/release/examples/bench DELIVERED

DELIVERED is the `delivered` count `bench --count` prints. Joins callgrind's per-instruction
counts (self cost, the cost line after each `calls=` skipped) with `objdump -d` of the binary
and prints every executed div, idiv, divsd/divss/divpd, sqrtsd/sqrtss and call of
__udivti3/__umodti3/__divti3 (and the instructions inside those helpers): executions, per
delivered packet, address, instruction, function. Instruction counts treat a division as one
instruction; on this AMD EPYC a 64-bit `div` takes ~20-40 cycles and a `divsd` ~13-20.
"""
import collections
import re
import subprocess
import sys

cg, binary, delivered = sys.argv[1], sys.argv[2], float(sys.argv[3])
cost = collections.Counter()
addr, after_call = 0, False
for line in open(cg):
    if line.startswith("calls="):
        after_call = True
        continue
    if line.startswith("0x") or line[:1] in ("+", "-", "*"):
        tok = line.split()
        a = tok[0]
        if a.startswith("0x"):
            addr = int(a, 16)
        elif a[0] == "+":
            addr += int(a[1:])
        elif a[0] == "-":
            addr -= int(a[1:])
        if after_call:  # the call's inclusive cost, not the instruction's own
            after_call = False
        elif len(tok) >= 3:
            cost[addr] += int(tok[2])
        continue
    after_call = False

ops = {"div", "idiv", "divsd", "divss", "divpd", "sqrtsd", "sqrtss", "sqrtpd"}
helper = re.compile(r"__(u?div|u?mod)ti3")
dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary],
                      capture_output=True, text=True, check=True).stdout
fn, rows = None, []
for line in dump.splitlines():
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m:
        fn = m.group(1)
        continue
    m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
    if not m:
        continue
    a, op, args = int(m.group(1), 16), m.group(2), m.group(3)
    if op in ops or (op.startswith("call") and helper.search(args)):
        if cost.get(a):
            rows.append((cost[a], fn, a, op, args))
rows.sort(reverse=True)
for n, f, a, op, args in rows:
    print(f"{n:10d} {n / delivered:7.3f}  {a:#x} {op:7s} {f[:120]}")
total = sum(r[0] for r in rows)
print(f"total {total} ({total / delivered:.3f} per delivered packet)")
