#!/usr/bin/env bash
# Runs the misaal CLI from a fresh checkout: set-up (idempotent), build, run.
#   scripts/run.sh isa check --target x86
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
cargo build --bin misaal
exec "$ROOT/target/debug/misaal" "$@"
