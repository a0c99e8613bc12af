#!/usr/bin/env bash
# The benchmark suite as Halide 19 prints and compiles it: benchmarks/halide19/
# (stmt/*.stmt and manifest.json, committed; build/halide/, not committed).
#
# Halide 19 lives in its own venv, .deps/halide19, so the Halide 21 that
# scripts/setup.sh pip-installs stays the default everywhere else. Idempotent:
# the venv is made once; rerunning regenerates byte-identical files.
#
#   benchmarks/halide19.sh                 # all 33 kernels
#   benchmarks/halide19.sh sobel3x3 add    # only these (any generate.py arguments)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.deps/halide19"
VERSION="19.0.0"

if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('halide') == '$VERSION' else 1)" 2>/dev/null; then
    echo "halide19: installing halide==$VERSION and numpy into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet "halide==$VERSION" numpy
    "$VENV/bin/python" -c "import halide" || { echo "halide19: halide did not install" >&2; exit 1; }
fi
exec "$VENV/bin/python" "$ROOT/benchmarks/generate.py" --suite "$ROOT/benchmarks/halide19" "$@"
