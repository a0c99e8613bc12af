#!/usr/bin/env bash
# Translation validation over the whole benchmark suite: `misaal compile
# --validate` on every kernel, one line each (kernel, exit status, seconds,
# the validator's summary), then a total. Exits non-zero if any kernel has a
# mismatch (1) or an undecided root (3). Opt-in, not part of scripts/test.sh:
# it takes about 7 minutes on 2 cores. The solver's budget per query is
# wall-clock time (20 s by default): on a loaded machine set
# MISAAL_VALIDATE_TIMEOUT (ms) higher, or MISAAL_VALIDATE_RLIMIT for a budget
# in Z3's own units that does not depend on the load.
#   scripts/validate-suite.sh [MISAAL_BINARY] [SUITE_DIR]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/target/release/misaal}"
SUITE="${2:-$ROOT/benchmarks}"
[ -x "$BIN" ] || { echo "no misaal binary at $BIN (run: cargo build --release)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf "kernel\tstatus\tseconds\tsummary\n"
fail=0; n=0; ok=0
for f in "$SUITE"/stmt/*.stmt; do
  k="$(basename "$f" .stmt)"
  start=$(date +%s.%N)
  "$BIN" compile --validate --validate-timeout "${MISAAL_VALIDATE_TIMEOUT:-20000}" \
    --validate-rlimit "${MISAAL_VALIDATE_RLIMIT:-0}" "$f" -o "$work/$k.c" >"$work/$k.log" 2>&1
  rc=$?
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  summary="$(grep -E '^validate:' "$work/$k.log" | tail -1)"
  [ -n "$summary" ] || summary="$(tail -1 "$work/$k.log")"
  printf "%s\t%d\t%s\t%s\n" "$k" "$rc" "$secs" "$summary"
  n=$((n + 1))
  if [ "$rc" -eq 0 ]; then ok=$((ok + 1)); else fail=1; fi
done
echo "validated $ok of $n kernels"
exit "$fail"
