#!/usr/bin/env python3
"""What a search's added hardware point executes, by kind of instruction (issue 46 item 3).

Runs `pm-bench --count search_hw` under callgrind (each instruction's count kept) at 1 and 3
iterations, over the axes given and over one point (`--axis l2=1MiB:1MiB:1MiB`: the compile and
the search's set-up), and prints, per added point ((Ir(3) - Ir(1)) / 2 less the one-point
search's, over points - 1, as scripts/bench-instructions.sh's "compile left out" rows), the
instructions by class: floating-point arithmetic (add, sub, mul, div, max, min, sqrt, fma,
scalar or packed), floating-point compares, floating-point moves and conversions, integer
moves and address arithmetic, branches and integer compares, string copies (rep movs), other
integer work; then the functions that execute most, each with its floating-point share. The
classes come from objdump's disassembly of each object at the addresses callgrind counts.

Usage: scripts/instruction-mix.py BUILD_DIR POINTS --axis SPEC [--axis SPEC]
  POINTS  the hardware points the axes span (e.g. 61 for hbm_bw=1TBps:4TBps:0.05TBps)
Needs valgrind and objdump (Debian: valgrind, binutils).
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIX = re.compile(r"\.(lto_priv|isra|part|constprop|cold)\.\d+")


def classify(m):
    if re.match(r"v?(add|sub|mul|div|max|min|sqrt)(sd|pd|ss|ps)$", m) or \
            re.match(r"vf(n)?m(add|sub)", m):
        return "fp arithmetic"
    if re.match(r"v?u?comis[sd]$|v?cmp\w*(sd|pd|ss|ps)$", m):
        return "fp compare"
    if re.match(r"v?(movs[sd]|movap[sd]|movup[sd]|movq|movd|movdq[au]|unpck[lh]p[sd]|mov[hl]p[sd]|"
                r"andn?p[sd]|orp[sd]|xorp[sd]|blendvp[sd]|cvt\w+|pxor|shufp[sd]|vmovdq[au]\d*)$", m):
        return "fp move/convert"
    if m.startswith("rep"):
        return "string copy"
    if m.startswith(("j", "cmov", "set")) or m in ("call", "ret", "cmp", "cmpb", "cmpl", "cmpq",
                                                 "cmpw", "test", "testb", "testl", "testq"):
        return "branch/int compare"
    if m.startswith(("mov", "lea", "push", "pop")):
        return "int move/address"
    return "int other"


_dis = {}


def mnemonics(obj):
    if obj not in _dis:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj],
                             capture_output=True, text=True).stdout
        d = {}
        for line in out.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
            if m:
                d[int(m.group(1), 16)] = m.group(2)
        _dis[obj] = d
    return _dis[obj]


def counts(path):
    """(function, class) -> instructions, self cost only."""
    c = collections.Counter()
    obj = fn = None
    after_call = False
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("fn="):
                fn = SUFFIX.sub("", line[3:].strip().split("'")[0])
            elif line.startswith("calls="):
                after_call = True
            elif line.startswith("0x"):
                if after_call:  # the call's inclusive cost, not this function's own
                    after_call = False
                    continue
                addr, n = line.split()[:2]
                d = mnemonics(obj) if obj and os.path.exists(obj) else {}
                c[(fn, classify(d.get(int(addr, 16), "?")))] += int(n)
    return c


def run(build, axes, it, out):
    cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--dump-line=no",
           "--compress-pos=no", "--compress-strings=no", "--callgrind-out-file=" + out,
           os.path.join(build, "bench", "pm-bench"), "--data-dir", os.path.join(ROOT, "data"),
           "--count", "search_hw", "--iterations", str(it)]
    for a in axes:
        cmd += ["--axis", a]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return counts(out)


def main(argv):
    if len(argv) < 5 or argv[3] != "--axis":
        sys.exit(__doc__)
    build, points = argv[1], int(argv[2])
    axes = [argv[i + 1] for i in range(3, len(argv) - 1, 2) if argv[i] == "--axis"]
    with tempfile.TemporaryDirectory() as tmp:
        a1, a3 = (run(build, axes, it, os.path.join(tmp, "a.%d" % it)) for it in (1, 3))
        o1, o3 = (run(build, ["l2=1MiB:1MiB:1MiB"], it, os.path.join(tmp, "o.%d" % it))
                  for it in (1, 3))
    per = {k: ((a3[k] - a1[k]) - (o3[k] - o1[k])) / 2 / (points - 1)
           for k in set(a1) | set(a3) | set(o1) | set(o3)}
    by_class, by_fn = collections.Counter(), collections.defaultdict(collections.Counter)
    for (fn, cls), v in per.items():
        by_class[cls] += v
        by_fn[fn][cls] += v
    total = sum(by_class.values())
    print("per added hardware point (%s): %.0f instructions" % (" x ".join(axes), total))
    for cls, v in by_class.most_common():
        print("  %-20s %8.0f  %5.1f %%" % (cls, v, 100 * v / total))
    print("\n%-30s %7s %8s %7s %8s" % ("function", "instr", "fp arith", "fp cmp", "fp move"))
    for fn, d in sorted(by_fn.items(), key=lambda kv: -sum(kv[1].values()))[:25]:
        print("%-30s %7.0f %8.0f %7.0f %8.0f" % (fn[:30], sum(d.values()), d["fp arithmetic"],
                                                 d["fp compare"], d["fp move/convert"]))


if __name__ == "__main__":
    main(sys.argv)
