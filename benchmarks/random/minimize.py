#!/usr/bin/env python3
"""Shrinks a failing random pipeline while its failure remains.

    python3 benchmarks/random/minimize.py --suite DIR --kernel NAME [--case OUT] [--misaal BIN]

reads DIR/programs/NAME.json (generate.py's program of a pipeline whose
`misaal bench` row was not bit-exact), and greedily tries smaller
programs: schedule directives dropped, later stages dropped, reductions
made pure or shorter, subexpressions replaced by a child, a cast of a child
or a constant, the output shrunk to fewer rows and columns, unused inputs
and parameters removed. Each candidate is compiled by Halide (generate.py
--worker) and benched alone; it is kept when its row fails the same way
(the same class: differs from the interpreter, from Halide's object, the
compile or the harness failed). The result is written to
DIR/programs/NAME.min.json, and with --case OUT as a regression case:

    OUT/stmt/<case>.stmt, OUT/manifest.json   a one-kernel bench suite
    OUT/program.json                          the minimized program
    OUT/EXPECT                                what `cargo test --test random_regressions` expects

EXPECT starts `bit-exact` (a fixed miscompile: the test requires a `yes`
row) or `fails: <reason>` for a known open bug (the test requires the row
to still fail; it fails when the bug is fixed, so the case gets flipped).
"""

import argparse
import copy
import csv
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import programs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def failure_class(cell):
    """The kind of a bench row's failure, or None when it is bit-exact."""
    if cell.startswith("yes"):
        return None
    if cell.startswith("unchecked") or cell.startswith("skipped"):
        return None
    if "cc failed" in cell:
        return "cc"
    if "compile failed" in cell:
        return "compile"
    if "harness failed" in cell:
        return "harness"
    if "the reference interpreter" in cell:
        return "interpreter"
    if "Halide's object" in cell:
        return "halide"
    if "the naive build differs" in cell:
        return "naive"
    return "other: " + cell[:60]


class Runner:
    def __init__(self, misaal, scratch, inputs):
        self.misaal = misaal
        self.scratch = scratch
        self.inputs = inputs
        self.trials = 0

    def bench(self, prog, name):
        """Compiles prog as kernel `name` into the scratch suite, benches
        it alone; (failure class or None, bit_exact cell), or (None,
        reason) when Halide refused the program."""
        self.trials += 1
        suite = os.path.join(self.scratch, "suite")
        for f in ("stmt/%s.stmt" % name, "build/halide/%s.o" % name, "build/halide/%s.h" % name):
            if os.path.exists(os.path.join(suite, f)):
                os.remove(os.path.join(suite, f))
        pfile = os.path.join(self.scratch, "program.json")
        with open(pfile, "w") as f:
            json.dump(prog, f)
        r = subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), "--suite", suite, "--worker", name,
                            "--program", pfile, "--runtime"], capture_output=True, text=True)
        if r.returncode != 0:
            return None, "halide refused: " + (r.stderr.strip().splitlines() or ["?"])[-1]
        entry = json.loads(r.stdout.strip().splitlines()[-1])
        write_manifest(suite, name, entry)
        work, rep = os.path.join(self.scratch, "work"), os.path.join(self.scratch, "reports")
        r = subprocess.run([self.misaal, "bench", "--suite", suite, "--kernel", name, "--work-dir", work,
                        "--report-dir", rep, "--inputs", str(self.inputs)], capture_output=True, text=True)
        try:
            with open(os.path.join(rep, "bench_x86.csv")) as f:
                row = next(csv.DictReader(f))
            os.remove(os.path.join(rep, "bench_x86.csv"))
        except (OSError, StopIteration):
            raise SystemExit("misaal bench wrote no row for %s:\n%s%s" % (name, r.stdout, r.stderr))
        return failure_class(row["bit_exact"]), row["bit_exact"]


def write_manifest(suite, name, entry):
    gen = load_generate()
    text = gen.suite_gen.format_manifest({"halide": gen.suite_gen.halide_version(), "target": gen.suite_gen.TARGET,
                                          "kernels": {name: entry}})
    with open(os.path.join(suite, "manifest.json"), "w") as f:
        f.write(text)


_GEN = []


def load_generate():
    if not _GEN:
        import importlib.util
        spec = importlib.util.spec_from_file_location("random_generate", os.path.join(HERE, "generate.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _GEN.append(mod)
    return _GEN[0]


# ----- candidates ------------------------------------------------------------

def paths(e, path=()):
    """Every subexpression's path, outermost first."""
    if isinstance(e, list) and e and isinstance(e[0], str):
        yield path
        for i, x in enumerate(e):
            if i > 0 and isinstance(x, list):
                yield from paths(x, path + (i,))


def get(e, path):
    for i in path:
        e = e[i]
    return e


def put(e, path, v):
    if not path:
        return v
    e = copy.deepcopy(e)
    get(e, path[:-1])[path[-1]] = v
    return e


def smaller_exprs(prog, e, env_stage):
    """Replacements of e: its children of its type, casts of them, zero."""
    env = programs.Env(prog, env_stage)
    env.ranges = programs.check({**prog, "stages": prog["stages"][:env_stage]}) if env_stage else {}
    env.in_body = True
    try:
        t, _ = programs.typed(e, env)
    except programs.Invalid:
        return
    kids = [x for x in e[1:] if isinstance(x, list) and x and isinstance(x[0], str)]
    for k in kids:
        try:
            kt, _ = programs.typed(k, env)
        except programs.Invalid:
            continue
        yield k if kt == t else ["cast", t, k]
    if e[0] != "c":
        yield ["c", t, 0]
        yield ["c", t, 1]


def candidates(prog):
    """Smaller programs, the biggest cuts first."""
    # Later stages dropped: an earlier stage becomes the output.
    for k in range(len(prog["stages"]) - 1):
        p = copy.deepcopy(prog)
        p["stages"] = p["stages"][:k + 1]
        p["schedule"]["stages"] = p["schedule"]["stages"][:k]
        yield "output = stage %d" % k, p
    # Schedule directives.
    for key in list(prog["schedule"]["out"]):
        if key in ("tail", "unroll_y"):
            continue
        p = copy.deepcopy(prog)
        del p["schedule"]["out"][key]
        if key == "vector":
            p["schedule"]["out"].pop("tail", None)
            p["schedule"]["out"].pop("unroll", None)
        if key == "split_y":
            p["schedule"]["out"].pop("unroll_y", None)
        yield "out: no " + key, p
    if prog["schedule"]["out"].get("tail") not in (None, "guard"):
        p = copy.deepcopy(prog)
        p["schedule"]["out"]["tail"] = "guard"
        yield "out: guard tail", p
    for i, st in enumerate(prog["schedule"]["stages"]):
        for key in ("vector", "update_vector"):
            if key in st:
                p = copy.deepcopy(prog)
                del p["schedule"]["stages"][i][key]
                yield "stage %d: no %s" % (i, key), p
        # inline < root < at_y/at_x: never back up, or two candidates cycle.
        if st["at"] not in ("root", "inline"):
            p = copy.deepcopy(prog)
            p["schedule"]["stages"][i]["at"] = "root"
            yield "stage %d: compute_root" % i, p
        if st["at"] != "inline" and "reduce" not in prog["stages"][i]:
            p = copy.deepcopy(prog)
            p["schedule"]["stages"][i] = {"at": "inline"}
            yield "stage %d: inline" % i, p
    # Reductions made pure or shorter.
    for i, s in enumerate(prog["stages"]):
        if "reduce" not in s:
            continue
        p = copy.deepcopy(prog)
        p["stages"][i] = {"type": s["type"], "expr": s["init"]}
        p["schedule"]["stages"][i:i + 1] = [{"at": "root"}] if i < len(prog["stages"]) - 1 else []
        if i == len(prog["stages"]) - 1:
            p["schedule"]["out"].pop("update_vector", None)
        yield "stage %d: init only" % i, p
        if s["extent"] > 1:
            for k in sorted({1, s["extent"] // 2}):
                p = copy.deepcopy(prog)
                p["stages"][i]["extent"] = k
                for w in p["weights"]:
                    if w["name"] == s.get("weight"):
                        w["extent"] = k
                yield "stage %d: extent %d" % (i, k), p
        if s["reduce"] not in ("sum",) and s["reduce"] != "dot":
            p = copy.deepcopy(prog)
            p["stages"][i]["reduce"] = "sum"
            yield "stage %d: sum" % i, p
    # Subexpressions.
    for i, s in enumerate(prog["stages"]):
        for key in ("expr", "init", "body"):
            if key not in s:
                continue
            for path in paths(s[key]):
                for r in smaller_exprs(prog, get(s[key], path), i):
                    p = copy.deepcopy(prog)
                    p["stages"][i][key] = put(s[key], path, r)
                    yield "expr: stage %d %s%s -> %s" % (i, key, list(path), json.dumps(r)[:60]), p
    # Sizes.
    for h in sorted({1, prog["H"] // 2}):
        if h < prog["H"] and h >= 1:
            p = copy.deepcopy(prog)
            p["H"] = h
            yield "H %d" % h, p
    for w in sorted({1, 8, prog["W"] // 2}):
        if 1 <= w < prog["W"]:
            p = copy.deepcopy(prog)
            p["W"] = w
            yield "W %d" % w, p
    # Unused arguments.
    text = json.dumps(prog["stages"])
    for key in ("inputs", "params", "weights"):
        for a in prog[key]:
            if '"%s"' % a["name"] not in text:
                p = copy.deepcopy(prog)
                p[key] = [b for b in p[key] if b["name"] != a["name"]]
                yield "drop %s" % a["name"], p


def size(prog):
    return len(json.dumps(prog))


def minimize(prog, runner, name, want, log):
    best = prog
    progress = True
    while progress:
        progress = False
        for what, cand in candidates(best):
            # Expressions, sizes and arguments must shrink the program;
            # schedule and stage steps only ever simplify (none undoes another).
            if size(cand) >= size(best) and not what.startswith(("out", "stage")):
                continue
            try:
                programs.check(cand)
            except (programs.Invalid, KeyError, StopIteration):
                continue
            got, cell = runner.bench(cand, name)
            if got == want:
                log("kept  %-60s (%d bytes) %s" % (what, size(cand), cell[:80]))
                best = cand
                progress = True
                break
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True, help="the generated suite (its programs/ folder)")
    ap.add_argument("--kernel", required=True, help="the failing pipeline")
    ap.add_argument("--case", metavar="OUT", help="write the minimized regression case here")
    ap.add_argument("--expect", default=None,
                    help="EXPECT's text for --case (default `fails: <the failure>`; `bit-exact` once fixed)")
    ap.add_argument("--misaal", default=os.path.join(ROOT, "target", "release", "misaal"))
    ap.add_argument("--scratch", default="/tmp/misaal-minimize")
    ap.add_argument("--inputs", type=int, default=3)
    opts = ap.parse_args()
    with open(os.path.join(opts.suite, "programs", opts.kernel + ".json")) as f:
        prog = json.load(f)
    os.makedirs(opts.scratch, exist_ok=True)
    runner = Runner(os.path.abspath(opts.misaal), os.path.abspath(opts.scratch), opts.inputs)
    name = opts.kernel
    want, cell = runner.bench(prog, name)
    print("original: %s (%d bytes): %s" % (want, size(prog), cell[:200]), flush=True)
    if want is None:
        print("the pipeline does not fail here; nothing to minimize")
        return 1
    best = minimize(prog, runner, name, want, lambda m: print(m, flush=True))
    with open(os.path.join(opts.suite, "programs", opts.kernel + ".min.json"), "w") as f:
        json.dump(best, f, sort_keys=True)
    got, cell = runner.bench(best, name)
    print("minimized in %d trials: %d -> %d bytes: %s" % (runner.trials, size(prog), size(best), cell[:200]))
    print(json.dumps({k: best[k] for k in ("inputs", "params", "weights", "stages", "W", "H", "schedule")}))
    if opts.case:
        write_case(opts.case, name, best, runner, opts.expect or "fails: %s: %s" % (want, cell))
    return 0


def write_case(out, name, prog, runner, expect):
    """The minimized pipeline as a one-kernel suite without Halide's
    objects (the regression test checks against the interpreter)."""
    runner.bench(prog, name)
    src = os.path.join(runner.scratch, "suite")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "stmt"))
    shutil.copy(os.path.join(src, "stmt", name + ".stmt"), os.path.join(out, "stmt", name + ".stmt"))
    shutil.copy(os.path.join(src, "manifest.json"), os.path.join(out, "manifest.json"))
    with open(os.path.join(out, "program.json"), "w") as f:
        json.dump(prog, f, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "EXPECT"), "w") as f:
        f.write(expect.strip() + "\n")
    print("wrote", out)


if __name__ == "__main__":
    sys.exit(main())
