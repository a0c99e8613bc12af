#!/usr/bin/env bash
# The test suite from a fresh checkout: set-up (idempotent), then every test
# of every crate. Extra arguments go to `cargo test`. Ends with one line
# totalling every test binary's results.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "all tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$status"
