#!/usr/bin/env python3
"""The figures of a random-pipeline bench run.

    python3 benchmarks/random/report.py --suite DIR --bench REPORTS/bench_x86.csv [--fallbacks OUT.csv]

reads `misaal bench`'s CSV (or, for a run still going, its stdout log:
any file not ending in .csv) and prints: pipelines, bit-exact rows, each
failing row, the share of pipelines with 0 fallback expressions, the
speed geomean against Halide's objects, and the ops, types and lane counts
that fell back most (from `misaal compile --explain` of every pipeline
with a fallback). --fallbacks writes those as CSV with the columns
kernel,op,signed,bits,lanes,count (one row per Halide op instance left to
the naive lowering, as `explain:   naive OP<S, E, N, ...> xCOUNT` names it).
"""

import argparse
import collections
import csv
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rows_of(path):
    """(kernel, bit_exact, fallback_exprs or None, speedup or None) per row."""
    if path.endswith(".csv"):
        with open(path) as f:
            for r in csv.DictReader(f):
                fb = int(r["fallback_exprs"]) if r["fallback_exprs"] else None
                sp = float(r["speedup"]) if r["speedup"] not in ("", "NaN") else None
                yield r["kernel"], r["bit_exact"], fb, sp
        return
    # The stdout log: `NAME  native compile ... halide X us S.SSx ... fallbacks N  VERDICT`.
    line_re = re.compile(r"^(\S+)\s+(native|simde)\s.*?halide\s+\S+ us\s+(\S+)x\s.*fallbacks\s+(\S+)\s+(.*)$")
    failed_re = re.compile(r"^(\S+)\s+compile\s+- ms.*fallbacks\s+(\S+)\s+(no: .*)$")
    with open(path) as f:
        for line in f:
            m = line_re.match(line)
            if m:
                sp = float(m.group(3)) if m.group(3) not in ("-", "NaN") else None
                yield m.group(1), m.group(5).strip(), (int(m.group(4)) if m.group(4) != "-" else None), sp
                continue
            m = failed_re.match(line)
            if m:
                yield m.group(1), m.group(3).strip(), None, None


def fallbacks(misaal, stmt):
    """[(op, signed, bits, lanes, count)] of one Stmt's naive ops."""
    r = subprocess.run([misaal, "compile", stmt, "--explain", "-o", "/dev/null"], capture_output=True, text=True)
    out = []
    for m in re.finditer(r"explain:\s+naive (\w+)<([^>]*)> x(\d+)", r.stdout + r.stderr):
        g = [x.strip() for x in m.group(2).split(",")]
        out.append((m.group(1), g[0] if g else "", g[1] if len(g) > 1 else "", g[2] if len(g) > 2 else "", int(m.group(3))))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--bench", required=True, help="bench_x86.csv, or the bench's stdout log")
    ap.add_argument("--fallbacks", metavar="OUT.csv")
    ap.add_argument("--misaal", default=os.path.join(ROOT, "target", "release", "misaal"))
    ap.add_argument("--top", type=int, default=12)
    opts = ap.parse_args()
    rows = list(rows_of(opts.bench))
    exact = [r for r in rows if r[1].startswith("yes")]
    bad = [r for r in rows if not r[1].startswith("yes")]
    print("pipelines %d, bit-exact %d, not bit-exact %d" % (len(rows), len(exact), len(bad)))
    for k, cell, _, _ in bad:
        print("  %s: %s" % (k, cell[:160]))
    counted = [r for r in rows if r[2] is not None]
    zero = sum(1 for r in counted if r[2] == 0)
    if counted:
        print("0 fallback expressions: %d of %d pipelines (%.1f%%)" % (zero, len(counted), 100.0 * zero / len(counted)))
    sp = [r[3] for r in rows if r[3] and r[3] > 0 and math.isfinite(r[3])]
    if sp:
        print("speed geomean vs Halide: %.3fx over %d pipelines" % (math.exp(sum(map(math.log, sp)) / len(sp)), len(sp)))
    by_op, by_type, by_lanes = collections.Counter(), collections.Counter(), collections.Counter()
    table = []
    for k, _, fb, _ in rows:
        if not fb:
            continue
        for op, s, b, n, c in fallbacks(opts.misaal, os.path.join(opts.suite, "stmt", k + ".stmt")):
            table.append((k, op, s, b, n, c))
            by_op[op] += c
            by_type[("i" if s == "1" else "u") + b] += c
            by_lanes[n] += c
    for title, counter in (("ops", by_op), ("element types", by_type), ("lane counts", by_lanes)):
        print("top fallback %s: %s" % (title, ", ".join("%s %d" % kv for kv in counter.most_common(opts.top))))
    if opts.fallbacks:
        with open(opts.fallbacks, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kernel", "op", "signed", "bits", "lanes", "count"])
            w.writerows(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
