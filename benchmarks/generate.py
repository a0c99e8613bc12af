#!/usr/bin/env python3
"""Generate misaal's benchmark artifacts from the Halide generators in kernels/.

Needs Halide 21's Python bindings, one pip command:

    pip install halide==21.0.0 numpy

Usage (from anywhere; paths are relative to this file):

    python3 benchmarks/generate.py                  # all 33 kernels
    python3 benchmarks/generate.py sobel3x3 add     # only these (manifest entries of the others are kept)
    python3 benchmarks/generate.py --list           # kernel names, one a line
    python3 benchmarks/generate.py --suite DIR      # write DIR/stmt, DIR/manifest.json, DIR/build/halide
    python3 benchmarks/generate.py --suite benchmarks/arm --target arm-64-linux-arm_dot_prod
                                                    # the ARM suite: Stmt, objects and runtime for AArch64
    python3 benchmarks/generate.py --suite benchmarks/hvx --target hexagon-32-noos-hvx-hvx_128
                                                    # the HVX suite, schedules for 128-byte vectors

The Halide release is whichever `import halide` finds; the manifest records
it. benchmarks/halide19.sh runs this script with Halide 19 from its own venv
into benchmarks/halide19/.

For every kernel <name> (kernels/<name>.py, whose build() returns the output
Func, its arguments and their benchmark sizes; see kernels/_common.py) it
writes

    stmt/<name>.stmt             Halide's lowered Stmt, text (committed)
    build/halide/<name>.o        object code, function <name>   (not committed)
    build/halide/<name>.h        its C header                   (not committed)

(under the suite folder, benchmarks/ by default) and updates manifest.json
(committed): for each kernel the function name and
its arguments in call order with their types and benchmark extents (see
README.md). It also writes build/halide/runtime.o, one standalone Halide
runtime to link the objects against.

Each kernel is compiled in its own Python process: Halide names temporaries
from process-wide counters, so this keeps every .stmt byte-identical however
many kernels are generated together. Rerunning changes nothing.
"""

import argparse
import concurrent.futures
import importlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.join(HERE, "kernels")
# The suite folder's parts; set_suite() moves them.
STMT_DIR = os.path.join(HERE, "stmt")
BUILD_DIR = os.path.join(HERE, "build", "halide")
MANIFEST = os.path.join(HERE, "manifest.json")


def set_suite(folder):
    global STMT_DIR, BUILD_DIR, MANIFEST
    folder = os.path.abspath(folder)
    STMT_DIR = os.path.join(folder, "stmt")
    BUILD_DIR = os.path.join(folder, "build", "halide")
    MANIFEST = os.path.join(folder, "manifest.json")


def halide_version():
    """The release of the Halide that `import halide` finds, e.g. 21.0.0."""
    import importlib.metadata
    return importlib.metadata.version("halide")

# Halide's "avx512" feature alone is AVX512F+CD: without BW it has no 512-bit
# byte or word instructions, its natural vector is 256 bits and LLVM splits
# 64-lane uint8 code into ymm halves. "avx512_skylake" adds BW, DQ and VL,
# the AVX-512 every AVX-512 server has. "avx512_zen4" adds VNNI, VBMI,
# BF16 and the rest of Ice Lake: the richest target every machine of ours
# runs, so Halide's baseline may use every instruction misaal may use.
TARGET = "x86-64-linux-avx512_zen4-no_runtime"
RUNTIME_TARGET = "x86-64-linux-avx512_zen4"
DEFAULT_TARGET = TARGET


def set_target(target):
    """--target: the Halide target of the Stmt, the objects and the runtime
    (e.g. arm-64-linux-arm_dot_prod), instead of the x86 default above."""
    global TARGET, RUNTIME_TARGET
    base = "-".join(f for f in target.split("-") if f != "no_runtime")
    TARGET, RUNTIME_TARGET = base + "-no_runtime", base
    # HVX's 128-byte mode has 1024-bit vectors: the kernels' schedules
    # (kernels/_common.py) vectorize by that, and workers inherit it.
    if "hvx_128" in base.split("-"):
        os.environ["MISAAL_VECTOR_BITS"] = "1024"


def object_targets(spec):
    """(object target, runtime target) for --object-target: TARGET by default;
    `host` is this machine's features (hl.get_host_target()), for a machine
    without AVX-512, where the Stmt stays TARGET's but Halide's objects must
    run. Any other value is a Halide target string without `no_runtime`."""
    import halide as hl
    if spec is None:
        return TARGET, RUNTIME_TARGET
    base = hl.get_host_target().to_string() if spec == "host" else spec
    base = "-".join(f for f in base.split("-") if f != "no_runtime")
    return base + "-no_runtime", base

KERNELS = [
    # image
    "sobel3x3", "sobel5x5",
    "dilate3x3", "dilate5x5", "dilate7x7",
    "blur3x3", "blur5x5", "blur7x7",
    "median3x3",
    "gaussian3x3", "gaussian5x5", "gaussian7x7",
    # NN and arithmetic
    "l2norm", "conv_nn", "conv3x3a16", "depthwise_conv",
    "average_pool", "max_pool", "fully_connected", "add", "mul", "softmax",
    # matmul
    "matmul_b1", "matmul_b2", "matmul_b4",
    # fused
    "average_pool_add", "max_pool_add",
    "matmul_bias", "matmul_bias_relu", "matmul_bias_gelu", "matmul_bias_add",
    "matmul_bias_relu_matmul", "matmul_bias_gelu_matmul",
]


def type_name(t):
    if t.is_uint():
        return "uint%d" % t.bits()
    if t.is_int():
        return "int%d" % t.bits()
    raise ValueError("benchmark kernels are integer only, got %s" % t)


def install_polyfills(hl):
    """Halide 19's Python bindings lack some of the fixed-point intrinsics the
    kernels call (Halide 21 has them all; then this does nothing). Each stand-in
    is written in Halide 19's own operators and computes exactly what Halide
    21's intrinsic does (the meanings in frontends/halide/fpir.sema), so the
    generators stay unchanged. Halide 19's simplifier and FindIntrinsics are
    free to re-form its own intrinsics from them, and do."""

    def expr(e):
        return e if isinstance(e, hl.Expr) else hl.Expr(e)

    def wider(t, signed=None):
        signed = t.is_int() if signed is None else signed
        return hl.Int(2 * t.bits()) if signed else hl.UInt(2 * t.bits())

    def widening_mul(a, b):
        a, b = expr(a), expr(b)
        w = wider(a.type(), a.type().is_int() or b.type().is_int())
        return hl.cast(w, a) * hl.cast(w, b)

    def saturating_add(a, b):
        a, b = expr(a), expr(b)
        t = a.type()
        return hl.saturating_cast(t, hl.cast(wider(t), a) + hl.cast(wider(t), b))

    def rounding_shift_right(x, y):
        # y > 0: round(x / 2^y), ties up, without overflow; y <= 0: x << -y.
        x = expr(x)
        if isinstance(y, int):
            if y > 0:
                return (x >> y) + ((x >> (y - 1)) & 1)
            return x << -y
        y = expr(y)
        return hl.select(y > 0, (x >> y) + ((x >> (y - 1)) & 1), x << -y)

    def rounding_mul_shift_right(a, b, q):
        # saturating_narrow(rounding_shift_right(widening_mul(a, b), q)).
        a = expr(a)
        return hl.saturating_cast(a.type(), rounding_shift_right(widening_mul(a, b), q))

    for name, f in [("widening_mul", widening_mul), ("saturating_add", saturating_add),
                    ("rounding_shift_right", rounding_shift_right),
                    ("rounding_mul_shift_right", rounding_mul_shift_right)]:
        if not hasattr(hl, name):
            setattr(hl, name, f)


def compile_one(name, object_target=None):
    """Compiles kernel `name` (in this process) and returns its manifest entry."""
    import halide as hl

    install_polyfills(hl)
    sys.dont_write_bytecode = True  # no __pycache__ in kernels/
    sys.path.insert(0, KERNEL_DIR)
    return compile_kernel(name, importlib.import_module(name).build(), object_target)


def compile_kernel(name, kernel, object_target=None):
    """Writes the Stmt, object and header of `kernel` (a build() dict, see
    kernels/_common.py) as function `name`; returns its manifest entry.
    benchmarks/random/generate.py calls it with its random pipelines."""
    import halide as hl

    out, inputs = kernel["output"], kernel["inputs"]
    sizes, values = kernel["sizes"], kernel["values"]
    mins = kernel.get("mins", {})
    target = hl.Target(TARGET)

    out.compile_to_lowered_stmt(os.path.join(STMT_DIR, name + ".stmt"), inputs,
                                hl.StmtOutputFormat.Text, target)
    out.compile_to({hl.OutputFileType.object: os.path.join(BUILD_DIR, name + ".o"),
                    hl.OutputFileType.c_header: os.path.join(BUILD_DIR, name + ".h")},
                   inputs, name, hl.Target(object_targets(object_target)[0]))

    args = []
    for p in inputs:
        if isinstance(p, hl.ImageParam):
            a = {"name": p.name(), "kind": "buffer", "type": type_name(p.type()),
                 "dims": sizes[p.name()], "output": False}
        else:
            a = {"name": p.name(), "kind": "scalar", "type": type_name(p.type()),
                 "value": values[p.name()], "output": False}
        if any(mins.get(p.name(), [])):
            a["min"] = mins[p.name()]
        args.append(a)
    o = {"name": out.name(), "kind": "buffer", "type": type_name(out.type()),
         "dims": sizes[out.name()], "output": True}
    if any(mins.get(out.name(), [])):
        o["min"] = mins[out.name()]
    args.append(o)
    return {"function": name, "args": args}


def run_worker(name, suite, object_target=None):
    """Runs `generate.py --worker name` and returns (name, entry, seconds)."""
    t0 = time.time()
    extra = ["--object-target", object_target] if object_target else []
    # The worker is its own process: it must be told the suite's target.
    if TARGET != DEFAULT_TARGET:
        extra += ["--target", RUNTIME_TARGET]
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--suite", suite, "--worker", name] + extra,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (name, r.stdout, r.stderr))
    return name, json.loads(r.stdout.strip().splitlines()[-1]), time.time() - t0


def format_manifest(m):
    """JSON with one line per argument, so diffs stay readable."""
    kernels = list(m["kernels"].items())
    lines = ["{",
             '  "halide": %s,' % json.dumps(m["halide"]),
             '  "target": %s,' % json.dumps(m["target"]),
             '  "kernels": {']
    for i, (name, entry) in enumerate(kernels):
        lines.append("    %s: {" % json.dumps(name))
        lines.append('      "function": %s,' % json.dumps(entry["function"]))
        lines.append('      "args": [')
        for j, a in enumerate(entry["args"]):
            lines.append("        " + json.dumps(a) + ("," if j + 1 < len(entry["args"]) else ""))
        lines.append("      ]")
        lines.append("    }" + ("," if i + 1 < len(kernels) else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:
        with open(path, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="*", help="kernel names (default: all)")
    ap.add_argument("--list", action="store_true", help="print the kernel names and exit")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="kernels compiled in parallel (default: number of CPUs)")
    ap.add_argument("--suite", metavar="DIR", default=HERE,
                    help="suite folder to write stmt/, manifest.json and build/halide/ into "
                         "(default: benchmarks/)")
    ap.add_argument("--object-target", metavar="TARGET",
                    help="compile Halide's objects and runtime for TARGET instead of the Stmt's "
                         "(`host`: this machine's, e.g. one without AVX-512); the Stmt and "
                         "manifest do not change")
    ap.add_argument("--target", metavar="TARGET",
                    help="Halide target of the Stmt, objects and runtime (default %s); for ARM "
                         "arm-64-linux-arm_dot_prod, with --suite benchmarks/arm" % RUNTIME_TARGET)
    ap.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    set_suite(opts.suite)
    if opts.target:
        set_target(opts.target)

    if opts.worker:
        print(json.dumps(compile_one(opts.worker, opts.object_target)))
        return 0
    if opts.list:
        print("\n".join(KERNELS))
        return 0

    names = opts.kernels or KERNELS
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        ap.error("unknown kernel(s): %s (see --list)" % ", ".join(unknown))

    import halide as hl
    os.makedirs(STMT_DIR, exist_ok=True)
    os.makedirs(BUILD_DIR, exist_ok=True)

    manifest = {"halide": halide_version(), "target": TARGET, "kernels": {}}
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            manifest["kernels"].update(json.load(f).get("kernels", {}))

    runtime = os.path.join(BUILD_DIR, "runtime.o")
    print("halide %s, suite %s" % (halide_version(), os.path.relpath(os.path.dirname(MANIFEST))), flush=True)
    obj_target, runtime_target = object_targets(opts.object_target)
    print("objects  build/halide/*.o (%s)" % obj_target, flush=True)
    print("runtime  build/halide/runtime.o (%s)" % runtime_target, flush=True)
    hl.compile_standalone_runtime(runtime, hl.Target(runtime_target))

    failed = []
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {pool.submit(run_worker, n, opts.suite, opts.object_target): n for n in names}
        for fut in concurrent.futures.as_completed(futures):
            n = futures[fut]
            done += 1
            try:
                _, entry, secs = fut.result()
            except Exception as e:  # report every failure, keep going
                failed.append(n)
                print("[%2d/%d] %-24s FAILED\n%s" % (done, len(names), n, e), flush=True)
                continue
            manifest["kernels"][n] = entry
            out = entry["args"][-1]
            print("[%2d/%d] %-24s %5.1fs  stmt/%s.stmt  build/halide/%s.{o,h}  out %s %s"
                  % (done, len(names), n, secs, n, n, out["type"],
                     "x".join(map(str, out["dims"]))), flush=True)

    # Kernels in the suite's order; entries of removed kernels are dropped.
    manifest["kernels"] = {n: manifest["kernels"][n] for n in KERNELS if n in manifest["kernels"]}
    return finish(manifest, "%d kernels" % len(manifest["kernels"]), failed)


def finish(manifest, summary, failed):
    """Writes the manifest, prints its summary line and what failed;
    returns the exit status (benchmarks/random/generate.py ends so too)."""
    write_if_changed(MANIFEST, format_manifest(manifest))
    print("manifest.json: %s" % summary)
    if failed:
        print("failed: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
