#!/usr/bin/env bash
# The test suite from a fresh checkout: set-up (idempotent), then every test
# of every crate. Extra arguments go to `cargo test`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
exec cargo test --workspace "$@"
