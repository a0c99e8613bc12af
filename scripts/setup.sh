#!/usr/bin/env bash
# Idempotent set-up for misaal on Debian 12 with only Rust installed.
#
# Z3: Debian's libz3 is 4.8.12, but the z3 crate 0.22 needs >= 4.13.3 and its
# bindings follow Z3 5.3. We take libz3 from the z3-solver wheel on PyPI (a
# 28 MB download, seconds) instead of building Z3 from source (~15 minutes,
# newer cmake and clang). .cargo/config.toml points z3-sys at .deps/z3 and
# sets an $ORIGIN-relative rpath, so nothing is installed system-wide.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
Z3_VERSION="5.4.0"
HALIDE_VERSION="21.0.0"
Z3_WHEEL_VERSION="5.4.0.0"
DEPS="$ROOT/.deps"
STAMP="$DEPS/z3/VERSION"

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
command -v cc >/dev/null || need_apt+=(gcc)
# jemalloc (the misaal binary's allocator) builds from source with make.
command -v make >/dev/null || need_apt+=(make)
# Clang compiles the scalar C baselines (benchmarks/scalar, clang -O3 -march=native).
command -v clang >/dev/null || need_apt+=(clang)
# The bench charts (reports/bench_x86.png) are drawn in DejaVu Sans.
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
# ARM NEON specs are checked under qemu (misaal isa check --target arm): a
# cross compiler for the C harness, its libc, and the user-mode emulator.
command -v qemu-aarch64 >/dev/null || need_apt+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null || need_apt+=(gcc-aarch64-linux-gnu)
[ -f /usr/aarch64-linux-gnu/include/stdio.h ] || need_apt+=(libc6-dev-arm64-cross)
# Hexagon HVX specs are checked under qemu-hexagon (misaal isa check --target
# hvx, from qemu-user above): freestanding C harnesses built by clang 19 for
# hexagon-unknown-none-elf and linked by ld.lld 19 (no Hexagon libc needed);
# llvm-19 brings llvm-objdump-19 for the static packet counts.
command -v clang-19 >/dev/null || need_apt+=(clang-19)
command -v ld.lld-19 >/dev/null || need_apt+=(lld-19)
command -v llvm-objdump-19 >/dev/null || need_apt+=(llvm-19)
# x86 kernels whose target needs a CPU feature this machine lacks (AVX-512 on
# an AVX2 machine) are checked by building our C against SIMDe's portable
# intrinsics (misaal bench, run `simde`); llvm-19 above brings llvm-mca-19
# for the znver4 estimate, and clang-19 builds our C for Zen 4 to feed it.
[ -f /usr/include/simde/x86/avx512.h ] || need_apt+=(libsimde-dev)
# tests/synth_slurm.rs runs scripts/synth-slurm.sh on a one-node Slurm
# cluster it starts itself (scripts/slurm-local.sh, every file in a
# temporary folder): Debian's Slurm 22.05 daemons, client and munge. Their
# services are not started or configured here, and without the optional
# plugins (--no-install-recommends below).
need_slurm=()
command -v munged >/dev/null || need_slurm+=(munge)
command -v slurmctld >/dev/null || need_slurm+=(slurmctld)
command -v slurmd >/dev/null || need_slurm+=(slurmd)
command -v sbatch >/dev/null || need_slurm+=(slurm-client)
if ((${#need_apt[@]} + ${#need_slurm[@]})); then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing ${need_apt[*]} ${need_slurm[*]} with apt-get"
    $SUDO apt-get update -qq
    if ((${#need_apt[@]})); then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
    fi
    if ((${#need_slurm[@]})); then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_slurm[@]}"
    fi
fi

if [ "$(cat "$STAMP" 2>/dev/null)" != "$Z3_VERSION" ] || [ ! -e "$DEPS/z3/lib/libz3.so" ]; then
    echo "setup: fetching libz3 $Z3_VERSION from the z3-solver $Z3_WHEEL_VERSION wheel"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        -d "$tmp" "z3-solver==$Z3_WHEEL_VERSION"
    rm -rf "$DEPS/z3.new"
    mkdir -p "$DEPS/z3.new"
    python3 - "$tmp" "$DEPS/z3.new" <<'PY'
import glob, os, shutil, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(tmp, "z3_solver-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if not name.endswith("/") and (name.startswith("z3/lib/libz3.so") or name.startswith("z3/include/")):
            target = os.path.join(dest, name[len("z3/"):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
PY
    echo "$Z3_VERSION" > "$DEPS/z3.new/VERSION"
    rm -rf "$DEPS/z3"
    mv "$DEPS/z3.new" "$DEPS/z3"
fi

# Halide 21 from PyPI: HalideRuntime.h for the C backend, and the benchmark
# generators and baseline (benchmarks/generate.py).
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('halide') == '$HALIDE_VERSION' else 1)" 2>/dev/null; then
    echo "setup: installing halide==$HALIDE_VERSION and numpy with pip"
    python3 -m pip install --quiet "halide==$HALIDE_VERSION" numpy 2>&1 | grep -v "Running pip as the 'root' user" || true
    python3 -c "import halide" || { echo "setup: halide did not install" >&2; exit 1; }
fi
