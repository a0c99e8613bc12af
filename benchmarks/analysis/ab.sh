#!/bin/bash
# Paired A/B timing of one kernel: two misaal binaries (or one binary with two
# rule files) benched alternately, N rounds, each in its own work folder, so
# both see the same load. Prints ours/Halide's time and the ratio per run.
#
#   benchmarks/analysis/ab.sh KERNEL N LABEL_A BIN_A RULES_A LABEL_B BIN_B RULES_B
#
# RULES `-` is the bundled default (rulesets/x86.egg). Copy the binaries first (e.g.
# target/perfcopy/misaal.base, built from the commit before the change) so
# other builds do not replace them mid-run. Halide's own time is bimodal
# between processes on this host: compare the ratios of several rounds.
set -u
cd "$(dirname "$0")/../.."
K=$1; N=$2; shift 2
for i in $(seq 1 "$N"); do
  for side in A B; do
    if [ "$side" = A ]; then L=$1; B=$2; R=$3; else L=$4; B=$5; R=$6; fi
    extra=(); [ "$R" != "-" ] && extra=(--rules "$R")
    "$B" bench --no-interp --kernel "$K" "${extra[@]}" --work-dir "target/perf-ab/$L" --report-dir "/tmp/perf-ab-$L" >"/tmp/perf-ab-$L.log" 2>&1
    python3 - "$L" "$K" <<'PY'
import csv, sys
label, kernel = sys.argv[1], sys.argv[2]
for r in csv.DictReader(open(f"/tmp/perf-ab-{label}/bench_x86.csv")):
    if r["kernel"] == kernel:
        print(f"{label:6s} {kernel:24s} ours {float(r['ours_us']):9.1f} halide {float(r['halide_us']):9.1f} "
              f"speedup {float(r['speedup']):.3f} {r['bit_exact'][:28]} fb={r['fallback_exprs']}")
PY
  done
done
