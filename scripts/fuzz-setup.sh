#!/usr/bin/env bash
# Idempotent set-up for fuzzing (not run by CI): a nightly toolchain through
# rustup (libFuzzer's sanitizer coverage needs nightly -Z flags) and
# cargo-fuzz from crates.io. Afterwards `scripts/fuzz.sh TARGET SECONDS`.
set -euo pipefail
CARGO_FUZZ_VERSION="${CARGO_FUZZ_VERSION:-0.13.1}"

if ! command -v rustup >/dev/null; then
    echo "fuzz-setup: rustup is required (https://rustup.rs)" >&2
    exit 1
fi
if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz-setup: installing the nightly toolchain"
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-setup: installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi
cargo fuzz --version
