#!/usr/bin/env python3
"""Innermost loops of our kernel and Halide's, side by side.

    loops.py WORKDIR KERNEL [KERNEL...]     (WORKDIR: a `misaal bench --work-dir`)

For each kernel it compiles WORKDIR/K/ours.c as bench does (cc -O3
-march=native), disassembles it and benchmarks/build/halide/K.o, finds the
innermost loops (a backward jump whose range holds no other backward jump)
with at least 6 vector instructions, and prints for each: instruction count,
stack stores (spills), the mnemonic histogram and llvm-mca's cycles per
iteration (-mcpu=znver2, this host's family). `-noalias=false` makes every
load wait for earlier stores, so spills cost more than on silicon: compare
the two columns, do not read them as times.
"""
import collections, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def halide_include():
    return subprocess.run(["python3", "-c", "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'include'))"], capture_output=True, text=True).stdout.strip()


def disasm(obj):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True).stdout
    ins, fn = [], None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:", line)
        if m:
            fn = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2), m.group(3).strip(), fn))
    return ins


def inner_loops(ins):
    idx = {a: i for i, (a, _, _, _) in enumerate(ins)}
    spans = []
    for i, (a, mn, ops, _) in enumerate(ins):
        if mn.startswith("j"):
            m = re.match(r"([0-9a-f]+)\s", ops + " ")
            if m and int(m.group(1), 16) <= a and int(m.group(1), 16) in idx:
                spans.append((idx[int(m.group(1), 16)], i))
    return [s for s in spans if not any(o != s and o[0] >= s[0] and o[1] <= s[1] for o in spans)]


def mca(body):
    skip = ("nop", "nopl", "nopw", "data16", "cs", "xchg")
    txt = "\n".join(f"{mn} {ops.split('#')[0]}" for _, mn, ops, _ in body if not mn.startswith("j") and mn not in skip)
    r = subprocess.run(["llvm-mca", "-mcpu=znver2", "-iterations=200", "-noalias=true"], input=txt, capture_output=True, text=True)
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(m.group(1)) / 200 if m else float("nan")


def report(label, obj):
    ins = disasm(obj)
    print(f"  {label}:")
    for s, e in inner_loops(ins):
        body = ins[s : e + 1]
        vec = sum(1 for x in body if x[1].startswith("v"))
        if vec < 6:
            continue
        hist = collections.Counter(mn for _, mn, _, _ in body)
        spills = sum(1 for _, mn, ops, _ in body if re.search(r",\s*-?(0x[0-9a-f]+)?\(%rsp", ops))
        print(f"    loop {body[0][0]:x}: {len(body)} insns, {spills} stack stores, mca {mca(body):.1f} cyc/iter")
        print("      " + ", ".join(f"{k}:{v}" for k, v in hist.most_common(24)))


def main():
    work, kernels = sys.argv[1], sys.argv[2:]
    inc = halide_include()
    with tempfile.TemporaryDirectory() as tmp:
        for k in kernels:
            obj = os.path.join(tmp, f"{k}.o")
            cc = subprocess.run(["cc", "-O3", "-march=native", "-c", "-o", obj, os.path.join(work, k, "ours.c"), "-I", inc, "-I", os.path.join(work, k)], capture_output=True, text=True)
            if cc.returncode != 0:
                print(f"{k}: cc failed\n{cc.stderr[:2000]}")
                continue
            print(k)
            report("ours", obj)
            report("halide", os.path.join(ROOT, "benchmarks/build/halide", f"{k}.o"))


if __name__ == "__main__":
    main()
