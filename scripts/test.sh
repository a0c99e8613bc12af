#!/usr/bin/env bash
# The test suite from a fresh checkout: set-up (idempotent), then every test
# of every crate. Extra arguments go to `cargo test`. Ends with one line
# totalling every test binary's results.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
log="$(mktemp)"
# Tests that cannot run here (a CPU feature, an emulator or a tool missing)
# write why to this ledger (crate misaal-testkit); the harness counted them
# passed, and the totals below count them skipped.
skips="$(mktemp)"
trap 'rm -f "$log" "$skips"' EXIT
export MISAAL_SKIP_LOG="$skips"
status=0
cargo test --workspace --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?
if [ -s "$skips" ]; then
    echo "skipped here, with the reason:"
    sort -u "$skips" | awk -F'\t' '{ printf "  %s%s: %s\n", $2, ($1 == "part" ? " (one check)" : ""), $3 }'
fi
whole=$(awk -F'\t' '$1 == "whole" { print $2 }' "$skips" | sort -u | wc -l)
part=$(awk -F'\t' '$1 == "part" { print $2 }' "$skips" | sort -u | wc -l)
awk -v whole="$whole" -v part="$part" '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "all tests: %d passed, %d failed, %d skipped", p - whole, f, s + whole; if (part > 0) printf " (and %d passing tests skipped one check)", part; printf "\n" }' "$log"
exit "$status"
