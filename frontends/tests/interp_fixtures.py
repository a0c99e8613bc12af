"""Halide's own results for the Stmt samples, for the interpreter test.

    pip install halide==21.0.0 && python3 frontends/tests/interp_fixtures.py

For every integer sample in frontends/src/stmt/samples/gen.py, and the
samples defined here (EXTRA, whose lowered Stmt this script writes to
frontends/tests/interp_fixtures/<sample>.stmt), sizes the inputs with
infer_input_bounds, fills them with seeded random data, realizes the
pipeline with Halide's JIT and writes inputs and output to
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

x, y = hl.Var("x"), hl.Var("y")
EXTRA = {}


def extra(f):
    EXTRA[f.__name__] = f
    return f


@extra
def shift_signedness():
    """Shifts whose amount's signedness differs from the value's, as Halide's
    Stmt writes them: a 3x3 convolution's int16 sum (its taps become
    shift_left(int16x32, x32((uint16)1 or 2))), widening_shift_right of it
    by x32((uint16)4) to int32, and uint16 / uint8 values shifted by signed
    amounts that are sometimes negative (which reverses the shift)."""
    a = hl.ImageParam(hl.Int(16), 2, "in")
    b = hl.ImageParam(hl.UInt(8), 2, "b")
    k = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    sh = hl.Func("sh")
    sh[x, y] = sum(hl.i16(k[j][i]) * a[x + i, y + j] for j in range(3) for i in range(3))
    w = hl.Func("w")
    w[x, y] = hl.widening_shift_right(sh[x, y], hl.u16(4))
    amt = hl.Func("amt")
    amt[x, y] = hl.i8(b[x, y] % 7) - 3
    u = hl.Func("u")
    u[x, y] = (hl.i32(hl.u16(a[x, y]) >> hl.i16(amt[x, y])) + hl.i32(hl.u16(a[x, y + 1]) << hl.i16(amt[x, y]))
               + hl.i32(hl.widening_shift_left(b[x, y + 1], amt[x, y])) + hl.i32(hl.widening_shift_right(b[x, y + 2], amt[x, y]))
               + hl.i32(hl.rounding_shift_right(b[x + 1, y], amt[x, y])) + hl.i32(hl.rounding_shift_left(b[x + 2, y], amt[x, y])))
    f = hl.Func("f")
    f[x, y] = w[x, y] * 3 + hl.i32(a[x + 1, y + 1] << hl.u16(2)) + u[x, y]
    f.vectorize(x, 32)
    for g in (sh, w, amt, u):
        g.compute_at(f, x).vectorize(x, 32)
    return f, [a, b]


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
    shared = random.Random(0x1d)
    for name, g in EXTRA.items():
        if not names or name in names:
            f, args = g()
            f.compile_to_lowered_stmt(os.path.join(OUT, f"{name}.stmt"), args, hl.StmtOutputFormat.Text, gen.T)
    for name, g in list(gen.gens.items()) + list(EXTRA.items()):
        # gen.py's samples share one stream (as when their fixtures were
        # written); each EXTRA sample has its own, so it can be rewritten alone.
        rng = shared if name in gen.gens else random.Random(name)
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
