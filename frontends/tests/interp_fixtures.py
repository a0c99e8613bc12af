"""Halide's own results for the Stmt samples, for the interpreter test.

    pip install halide==21.0.0 && python3 frontends/tests/interp_fixtures.py

For every integer sample in frontends/src/stmt/samples/gen.py, sizes the
inputs with infer_input_bounds, fills them with seeded random data, realizes
the pipeline with Halide's JIT and writes inputs and output to
frontends/tests/interp_fixtures/<sample>.json.
"""
import importlib.util, json, os, random, sys
import halide as hl

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gen", os.path.join(HERE, "../src/stmt/samples/gen.py"))
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
OUT = os.path.join(HERE, "interp_fixtures")
SIZES = {1: [1024], 2: [256, 64], 3: [64, 16, 4]}
# Not written: samples with explicit bounds these sizes break (interleave),
# tuples (multi_out) and specialize (aborts inside Halide 21).
SKIP = {"interleave", "multi_out", "specialize", "scalar_params"}

def tname(t):
    return ("int" if t.is_int() else "uint" if t.is_uint() else "bool" if t.is_bool() else "float") + str(t.bits())

def elements(b):
    dims = [b.dim(d) for d in range(b.dimensions())]
    idx = [d.min() for d in dims]
    while True:
        yield list(idx)
        for d in range(len(dims)):
            idx[d] += 1
            if idx[d] < dims[d].min() + dims[d].extent():
                break
            idx[d] = dims[d].min()
        else:
            return

def dump(b, t):
    nbytes = max(1, t.bits() // 8)
    data = bytearray()
    for i in elements(b):
        data += (int(b[i]) & ((1 << (8 * nbytes)) - 1)).to_bytes(nbytes, "little")
    return {"type": tname(t), "min": [b.dim(d).min() for d in range(b.dimensions())],
            "extent": [b.dim(d).extent() for d in range(b.dimensions())], "data": data.hex()}

def main(names):
    rng = random.Random(0x1d)
    for name, g in gen.gens.items():
        if (names and name not in names) or (not names and name in SKIP):
            continue
        try:
            f, args = g()
            if not isinstance(f, hl.Func) or f.outputs() != 1 or not f.type().is_int_or_uint() if hasattr(f.type(), "is_int_or_uint") else False:
                pass
            t = f.type()
            if t.is_float() or any(isinstance(a, hl.ImageParam) and a.type().is_float() for a in args):
                print(f"skip {name}: floating point"); continue
            size = SIZES[f.dimensions()]
            fargs = []
            for a in args:
                if isinstance(a, hl.Param):
                    v = rng.randint(1, 7)
                    a.set(v)
                    fargs.append({"name": a.name(), "kind": "scalar", "type": tname(a.type()), "value": v})
            f.infer_input_bounds(size)
            for a in args:
                if isinstance(a, hl.ImageParam):
                    b = a.get()
                    lo, hi = (-(1 << (a.type().bits() - 1)), (1 << (a.type().bits() - 1)) - 1) if a.type().is_int() else (0, (1 << a.type().bits()) - 1)
                    for i in elements(b):
                        b[i] = rng.randint(lo, hi)
                    fargs.append(dict(name=a.name(), kind="buffer", **dump(b, a.type())))
            out = f.realize(size)
            fixture = {"sample": name, "args": fargs, "output": dict(name=f.name(), **dump(out, t))}
            with open(os.path.join(OUT, f"{name}.json"), "w") as fh:
                json.dump(fixture, fh)
            print(f"wrote {name}")
        except Exception as e:  # a sample whose pipeline cannot be realized here
            print(f"skip {name}: {e}")

if __name__ == "__main__":
    main(sys.argv[1:])
