#!/usr/bin/env python3
"""Compare two cost tables written by `misaal isa measure`.

    scripts/compare-costs.py A.csv B.csv [--tol 0.10] [--show N]

A row agrees when both its latency and its rthroughput are within --tol
(relative to the smaller of the two values) in both tables. Only rows present
in both tables are compared. Prints the agreement figure and the rows that
disagree, worst first.
"""

import argparse
import csv
import sys


def load(path):
    with open(path, newline="") as f:
        return {r["intrinsic"]: r for r in csv.DictReader(f)}


def rel(a, b):
    return abs(a - b) / min(a, b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--tol", type=float, default=0.10)
    p.add_argument("--show", type=int, default=40, help="disagreeing rows to list")
    args = p.parse_args()
    a, b = load(args.a), load(args.b)
    common = sorted(set(a) & set(b))
    if not common:
        print("no rows in common", file=sys.stderr)
        return 1
    bad = []
    for n in common:
        la, lb = float(a[n]["latency"]), float(b[n]["latency"])
        ta, tb = float(a[n]["rthroughput"]), float(b[n]["rthroughput"])
        dl, dt = rel(la, lb), rel(ta, tb)
        if dl > args.tol or dt > args.tol:
            bad.append((max(dl, dt), n, la, lb, ta, tb))
    agree = len(common) - len(bad)
    only = len(set(a) ^ set(b))
    print(f"{agree}/{len(common)} rows agree within {args.tol:.0%} ({100 * agree / len(common):.1f}%)"
          + (f"; {only} row(s) in only one table" if only else ""))
    bad.sort(reverse=True)
    for d, n, la, lb, ta, tb in bad[: args.show]:
        print(f"  {n:40} lat {la:7.3f} {lb:7.3f}   rtp {ta:7.3f} {tb:7.3f}   ({d:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
