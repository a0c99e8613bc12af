#!/usr/bin/env python3
"""Random integer Halide pipelines as an ordinary bench suite: a
differential fuzzer for misaal (issue 30).

    python3 benchmarks/random/generate.py --count N --seed S --suite DIR [--target T] [-j J]

writes, like benchmarks/generate.py --suite DIR does for the hand-written
kernels (whose machinery this reuses),

    DIR/stmt/<name>.stmt          Halide's lowered Stmt
    DIR/build/halide/<name>.o,.h  Halide's object and header, function <name>
    DIR/build/halide/runtime.o    one standalone runtime
    DIR/manifest.json             arguments and sizes of every pipeline
    DIR/programs/<name>.json      the program (programs.py's format), for minimize.py

for the N pipelines r<S>_00000 .. r<S>_<N-1>, then `misaal bench --suite
DIR` checks each against Halide's object and the reference interpreter.
The same seed gives the same bytes: pipeline i is programs.program(S, i),
compiled in its own process (Halide numbers temporaries from process-wide
counters). A program Halide refuses (a compute_at no consumer encloses, ...)
is replaced by the program of the next attempt (a seed derived from S, i and
the attempt number), up to ATTEMPTS times; the summary line counts them.

`--worker NAME --program FILE` compiles one program file into the suite
(minimize.py's way in); it prints the manifest entry as JSON.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in benchmarks/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _suite_generator():
    """benchmarks/generate.py, the hand-written suite's generator (this
    file's namesake, so loaded by path)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("suite_generate", os.path.join(os.path.dirname(HERE), "generate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


suite_gen = _suite_generator()

ATTEMPTS = 20


def name_of(seed, index):
    return "r%d_%05d" % (seed, index)


def compile_program(name, prog, object_target):
    """Builds `prog` with Halide and writes its Stmt, object, header and
    program file into the suite; returns the manifest entry."""
    import build
    kernel = build.build(prog)
    entry = suite_gen.compile_kernel(name, kernel, object_target)
    folder = os.path.join(os.path.dirname(suite_gen.MANIFEST), "programs")
    os.makedirs(folder, exist_ok=True)
    suite_gen.write_if_changed(os.path.join(folder, name + ".json"), json.dumps(prog, sort_keys=True) + "\n")
    return entry


def worker(opts):
    import programs
    if opts.program:
        with open(opts.program) as f:
            prog = json.load(f)
    else:
        prog = programs.program(opts.seed, opts.index, opts.attempt)
        prog["origin"] = {"seed": opts.seed, "index": opts.index, "attempt": opts.attempt}
    programs.check(prog)
    os.makedirs(suite_gen.STMT_DIR, exist_ok=True)
    os.makedirs(suite_gen.BUILD_DIR, exist_ok=True)
    runtime = os.path.join(suite_gen.BUILD_DIR, "runtime.o")
    if opts.runtime and not os.path.exists(runtime):
        import halide as hl
        hl.compile_standalone_runtime(runtime, hl.Target(suite_gen.object_targets(opts.object_target)[1]))
    print(json.dumps(compile_program(opts.worker, prog, opts.object_target)))


def run_worker(suite, seed, index, object_target):
    """Compiles pipeline `index`, retrying derived seeds while Halide (or
    the overflow check) refuses one; (entry, attempts, seconds, last error)."""
    t0 = time.time()
    extra = ["--object-target", object_target] if object_target else []
    if suite_gen.TARGET != suite_gen.DEFAULT_TARGET:
        extra += ["--target", suite_gen.RUNTIME_TARGET]
    err = ""
    for attempt in range(ATTEMPTS):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--suite", suite, "--worker", name_of(seed, index),
                            "--seed", str(seed), "--index", str(index), "--attempt", str(attempt)] + extra,
                           capture_output=True, text=True)
        if r.returncode == 0:
            return json.loads(r.stdout.strip().splitlines()[-1]), attempt + 1, time.time() - t0, err
        err = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    raise RuntimeError("%s: %d attempts refused, the last: %s" % (name_of(seed, index), ATTEMPTS, err))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, help="pipelines to generate")
    ap.add_argument("--seed", type=int, default=0, help="the suite's seed (default 0)")
    ap.add_argument("--suite", metavar="DIR", required=True, help="suite folder to write")
    ap.add_argument("--target", metavar="TARGET",
                    help="Halide target of the Stmt, objects and runtime (default %s)" % suite_gen.RUNTIME_TARGET)
    ap.add_argument("--object-target", metavar="TARGET",
                    help="Halide's objects for TARGET instead (`host`: this machine's), as benchmarks/generate.py")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="pipelines compiled in parallel")
    ap.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    ap.add_argument("--index", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--attempt", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--program", metavar="FILE", help="with --worker NAME: compile this program file")
    ap.add_argument("--runtime", action="store_true", help="with --worker: also write build/halide/runtime.o if missing")
    opts = ap.parse_args()
    suite_gen.set_suite(opts.suite)
    if opts.target:
        suite_gen.set_target(opts.target)
    if opts.worker:
        worker(opts)
        return 0
    if opts.count is None:
        ap.error("--count is required")

    import halide as hl
    os.makedirs(suite_gen.STMT_DIR, exist_ok=True)
    os.makedirs(suite_gen.BUILD_DIR, exist_ok=True)
    obj_target, runtime_target = suite_gen.object_targets(opts.object_target)
    print("halide %s, %d random pipelines, seed %d, suite %s" % (suite_gen.halide_version(), opts.count, opts.seed, opts.suite), flush=True)
    print("objects  build/halide/*.o (%s)" % obj_target, flush=True)
    hl.compile_standalone_runtime(os.path.join(suite_gen.BUILD_DIR, "runtime.o"), hl.Target(runtime_target))

    t0 = time.time()
    entries, failed, retried = {}, [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {pool.submit(run_worker, opts.suite, opts.seed, i, opts.object_target): i for i in range(opts.count)}
        for done, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[fut]
            try:
                entry, attempts, secs, err = fut.result()
            except Exception as e:  # report every failure, keep going
                failed.append(name_of(opts.seed, i))
                print("[%d/%d] %s FAILED: %s" % (done, opts.count, name_of(opts.seed, i), e), flush=True)
                continue
            entries[name_of(opts.seed, i)] = entry
            retried += attempts > 1
            if attempts > 1 or done % 50 == 0 or done == opts.count:
                why = "  (%d attempts; refused: %s)" % (attempts, err[:120]) if attempts > 1 else ""
                print("[%d/%d] %s %.1fs%s" % (done, opts.count, name_of(opts.seed, i), secs, why), flush=True)

    manifest = {"halide": suite_gen.halide_version(), "target": suite_gen.TARGET,
                "kernels": {n: entries[n] for n in sorted(entries)}}
    return suite_gen.finish(manifest, "%d pipelines (%d regenerated from a derived seed) in %.0fs"
                            % (len(entries), retried, time.time() - t0), failed)


if __name__ == "__main__":
    sys.exit(main())
