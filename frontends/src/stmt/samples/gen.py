"""Generates the Stmt samples in this folder with Halide 21 (pip install halide).

Run from this folder: python3 gen.py. Each generator builds a small pipeline
that exercises some part of the lowered Stmt: FPIR ops, vector reductions,
shuffles, boundary conditions, specializations, parallel closures, constant
buffers, scalar params. They run in one process, in order, so repeated Func
names get Halide's `$N` suffixes, which the samples keep on purpose.
"""
import halide as hl

OUT = "."
T = hl.Target("x86-64-linux-avx512-no_runtime")
x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
xi, yi, xo, yo = hl.Var("xi"), hl.Var("yi"), hl.Var("xo"), hl.Var("yo")
gens = {}


def gen(f):
    gens[f.__name__] = f
    return f


@gen
def blur():
    inp = hl.ImageParam(hl.UInt(8), 2, "input")
    bx = hl.Func("blur_x"); out = hl.Func("blur3x3")
    bx[x, y] = (hl.u16(inp[x, y]) + inp[x+1, y] + inp[x+2, y])
    out[x, y] = hl.u8((bx[x, y] + bx[x, y+1] + bx[x, y+2]) // 3)
    out.tile(x, y, xi, yi, 128, 32).vectorize(xi, 64)
    bx.compute_at(out, x).vectorize(x, 64)
    return out, [inp]


@gen
def pointwise_u8():
    a = hl.ImageParam(hl.UInt(8), 1, "a"); b = hl.ImageParam(hl.UInt(8), 1, "b")
    f = hl.Func("f"); f[x] = a[x] + b[x] * 3 - (a[x] ^ b[x])
    f.vectorize(x, 64); return f, [a, b]

@gen
def fpir_u8():
    a = hl.ImageParam(hl.UInt(8), 1, "a"); b = hl.ImageParam(hl.UInt(8), 1, "b")
    f = hl.Func("f")
    f[x] = hl.u8((hl.u16(a[x]) + hl.u16(b[x]) + 1) // 2) + hl.saturating_add(a[x], b[x]) + hl.absd(a[x], b[x]) + hl.u8_sat(hl.u16(a[x]) * 3)
    f.vectorize(x, 64); return f, [a, b]

@gen
def fpir_i16():
    a = hl.ImageParam(hl.Int(16), 1, "a"); b = hl.ImageParam(hl.Int(16), 1, "b")
    f = hl.Func("f")
    m = hl.i32(a[x]) * hl.i32(b[x])
    f[x] = hl.i16_sat((m + (1 << 14)) >> 15) + hl.rounding_shift_right(a[x], 3) + hl.mul_shift_right(a[x], b[x], 15) + hl.rounding_mul_shift_right(a[x], b[x], 15) + hl.saturating_sub(a[x], b[x]) + hl.halving_add(a[x], b[x]) + hl.rounding_halving_add(a[x], b[x]) + hl.halving_sub(a[x], b[x])
    f.vectorize(x, 32); return f, [a, b]

@gen
def widening():
    a = hl.ImageParam(hl.Int(8), 1, "a"); b = hl.ImageParam(hl.UInt(8), 1, "b")
    f = hl.Func("f")
    f[x] = hl.widening_mul(a[x], a[x+1]) + hl.widening_sub(b[x], b[x+1]) + hl.i16(hl.widening_shift_left(b[x], hl.u8(2))) + hl.i16(hl.widening_add(b[x], b[x+2])) + hl.i16(hl.widening_shift_right(a[x], hl.i8(1)))
    f.vectorize(x, 64); return f, [a, b]

@gen
def widen_right():
    a = hl.ImageParam(hl.Int(16), 1, "a"); b = hl.ImageParam(hl.Int(8), 1, "b")
    f = hl.Func("f")
    f[x] = a[x] * hl.i16(b[x]) - hl.i16(b[x+1]) + a[x+1]
    f.vectorize(x, 32); return f, [a, b]

@gen
def reduce_dot():
    a = hl.ImageParam(hl.UInt(8), 2, "a"); b = hl.ImageParam(hl.Int(8), 1, "b")
    r = hl.RDom([(0, 64)], "r")
    f = hl.Func("f"); f[y] = 0
    f[y] += hl.i32(a[r.x, y]) * hl.i32(b[r.x])
    f.update().atomic().vectorize(r.x, 64)
    return f, [a, b]

@gen
def reduce_partial():
    a = hl.ImageParam(hl.Int(16), 2, "a")
    r = hl.RDom([(0, 4)], "r")
    f = hl.Func("f"); f[x] = hl.i32(0)
    f[x] += hl.i32(a[r.x, x])
    f.vectorize(x, 16).update().atomic().vectorize(r.x).vectorize(x, 16)
    return f, [a]

@gen
def reduce_max():
    a = hl.ImageParam(hl.UInt(8), 2, "a")
    r = hl.RDom([(0, 32)], "r")
    f = hl.Func("f"); f[y] = hl.u8(0)
    f[y] = hl.max(f[y], a[r.x, y])
    f.update().atomic().vectorize(r.x, 32)
    return f, [a]

@gen
def strided():
    a = hl.ImageParam(hl.UInt(8), 1, "a")
    f = hl.Func("f"); f[x] = a[2*x] + a[2*x+1]
    f.vectorize(x, 32); return f, [a]

@gen
def interleave():
    a = hl.ImageParam(hl.Int(16), 1, "a"); b = hl.ImageParam(hl.Int(16), 1, "b")
    f = hl.Func("f"); f[x, c] = hl.select(c == 0, a[x], b[x])
    f.bound(c, 0, 2).reorder(c, x).unroll(c).vectorize(x, 16)
    return f, [a, b]

@gen
def deinterleave3():
    a = hl.ImageParam(hl.UInt(8), 1, "a")
    f = hl.Func("f"); f[x] = a[3*x] / 2 + a[3*x+1] / 4 + a[3*x+2] / 4
    f.vectorize(x, 16); return f, [a]

@gen
def select_minmax():
    a = hl.ImageParam(hl.Int(32), 1, "a"); b = hl.ImageParam(hl.Int(32), 1, "b")
    p = hl.Param(hl.Int(32), "thresh")
    f = hl.Func("f"); f[x] = hl.select(a[x] > p, hl.min(a[x], b[x]), hl.max(a[x] - p, -b[x])) % 7 + hl.abs(a[x]) 
    f.vectorize(x, 16); return f, [a, b, p]

@gen
def div_const():
    a = hl.ImageParam(hl.UInt(16), 1, "a"); b = hl.ImageParam(hl.Int(16), 1, "b")
    f = hl.Func("f"); f[x] = a[x] / 7 + hl.u16(b[x] / 3) + a[x] % 5 + hl.u16(b[x] % 9)
    f.vectorize(x, 32); return f, [a, b]

@gen
def casts():
    a = hl.ImageParam(hl.Int(8), 1, "a")
    f = hl.Func("f"); f[x] = hl.u32(hl.i16(a[x]) * 5) + hl.reinterpret(hl.UInt(32), hl.i32(a[x])) + hl.u32(hl.f32(a[x]) * 0.5)
    f.vectorize(x, 16); return f, [a]

@gen
def scalar_params():
    a = hl.ImageParam(hl.UInt(16), 2, "in")
    k = hl.Param(hl.UInt(16), "k"); s = hl.Param(hl.Int(8), "s"); bb = hl.Param(hl.Bool(), "flag")
    f = hl.Func("f"); f[x, y] = hl.select(bb, a[x, y] * k, a[x, y] + hl.u16(s))
    f.vectorize(x, 32); return f, [a, k, s, bb]

@gen
def boundary():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    cl = hl.BoundaryConditions.repeat_edge(a)
    f = hl.Func("f"); f[x, y] = hl.u8((hl.u16(cl[x-1, y]) + hl.u16(cl[x+1, y]) + 2 * hl.u16(cl[x, y])) >> 2)
    f.vectorize(x, 64).parallel(y); return f, [a]

@gen
def const_exterior():
    a = hl.ImageParam(hl.Int(16), 2, "in")
    cl = hl.BoundaryConditions.constant_exterior(a, 0)
    f = hl.Func("f"); f[x, y] = cl[x-1, y] + cl[x, y+1]
    f.vectorize(x, 32); return f, [a]

@gen
def specialize():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    p = hl.Param(hl.Int(32), "mode")
    f = hl.Func("f"); f[x] = hl.select(p == 0, a[x], a[x] * 2)
    f.vectorize(x, 64)
    f.specialize(p == 0)
    f.specialize(p == 1).vectorize(x, 32)
    return f, [a, p]

@gen
def tile_compute_at():
    a = hl.ImageParam(hl.Int(16), 2, "in")
    g = hl.Func("g"); g[x, y] = a[x, y] * 2 + a[x + 1, y]
    f = hl.Func("f"); f[x, y] = g[x, y] + g[x, y + 1]
    f.tile(x, y, xi, yi, 64, 8).vectorize(xi, 32).unroll(yi, 2).parallel(y)
    g.compute_at(f, x).vectorize(x, 32).store_in(hl.MemoryType.Stack)
    return f, [a]

@gen
def multi_out():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    f = hl.Func("f"); f[x] = (a[x] + 1, hl.u16(a[x]) * 2)
    f.vectorize(x, 32)
    return f, [a]

@gen
def predicated_tail():
    a = hl.ImageParam(hl.Int(32), 1, "in")
    f = hl.Func("f"); f[x] = a[x] * 3
    f.vectorize(x, 16, hl.TailStrategy.Predicate)
    return f, [a]

@gen
def guard_if():
    a = hl.ImageParam(hl.Int(32), 1, "in")
    f = hl.Func("f"); f[x] = a[x] * 3
    f.vectorize(x, 16, hl.TailStrategy.GuardWithIf)
    return f, [a]

@gen
def lut():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    lut = hl.Func("lut"); lut[x] = hl.u8(x * x / 255)
    f = hl.Func("f"); f[x] = lut[hl.i32(a[x])]
    lut.compute_root()
    f.vectorize(x, 32)
    return f, [a]

@gen
def bool_ops():
    a = hl.ImageParam(hl.Int(32), 1, "a")
    f = hl.Func("f"); f[x] = hl.select((a[x] > 3) & ~(a[x] < -4) | (a[x] == 7), hl.i32(1), a[x] << 2) + (a[x] >> 1) + (~a[x] & 15)
    f.vectorize(x, 8); return f, [a]

@gen
def scalar_only():
    a = hl.ImageParam(hl.Int(64), 1, "a")
    f = hl.Func("f"); f[x] = a[x] * 3 + hl.i64(x)
    return f, [a]

@gen
def conv3d():
    a = hl.ImageParam(hl.UInt(8), 3, "img")
    w = hl.ImageParam(hl.Int(8), 1, "w")
    r = hl.RDom([(0, 3)], "r")
    f = hl.Func("f"); f[x, y, c] = hl.i32(0)
    f[x, y, c] += hl.i32(a[x + r.x, y, c]) * w[r.x]
    f.vectorize(x, 16).update().reorder(r.x, x).vectorize(x, 16).unroll(r.x)
    return f, [a, w]

@gen
def float_ops():
    a = hl.ImageParam(hl.Float(32), 1, "a")
    f = hl.Func("f"); f[x] = hl.i32(a[x] * 0.5 + 1.25) + hl.i32(hl.f64(a[x]))
    f.vectorize(x, 16); return f, [a]

@gen
def gather():
    a = hl.ImageParam(hl.Int(32), 1, "a"); idx = hl.ImageParam(hl.Int(32), 1, "idx")
    f = hl.Func("f"); f[x] = a[hl.clamp(idx[x], 0, 100)]
    f.vectorize(x, 8); return f, [a, idx]

@gen
def reverse():
    a = hl.ImageParam(hl.Int(16), 1, "a")
    f = hl.Func("f"); f[x] = a[100 - x]
    f.vectorize(x, 16); return f, [a]

@gen
def bitwise_fpir():
    a = hl.ImageParam(hl.UInt(16), 1, "a"); b = hl.ImageParam(hl.Int(16), 1, "b")
    f = hl.Func("f"); f[x] = (a[x] << hl.u16(b[x])) + (a[x] >> 3) + hl.u16(hl.count_leading_zeros(a[x])) + hl.u16(hl.popcount(a[x]))
    f.vectorize(x, 32); return f, [a, b]

@gen
def sat_cast():
    a = hl.ImageParam(hl.Int(32), 1, "a")
    f = hl.Func("f"); f[x] = hl.saturating_cast(hl.UInt(8), a[x]) + hl.u8_sat(a[x] >> 4)
    f.vectorize(x, 64); return f, [a]

@gen
def par_shared():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    g = hl.Func("g"); g[x, y] = hl.u16(a[x, y]) * 3
    f = hl.Func("f"); f[x, y] = hl.u8(g[x, y] + g[x, y+1] >> 2)
    f.split(y, y, yi, 8).parallel(y).vectorize(x, 32)
    g.compute_root().vectorize(x, 32)
    return f, [a]

@gen
def const_buffer():
    b = hl.Buffer(hl.Int(16), [16], "coeffs")
    a = hl.ImageParam(hl.Int(16), 1, "in")
    f = hl.Func("f"); f[x] = a[x] * b[x % 16]
    f.vectorize(x, 16)
    return f, [a]

@gen
def unused_param():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    p = hl.Param(hl.UInt(16), "unused")
    q = hl.Param(hl.Int(8), "ranged", 3); q.set_range(0, 10)
    f = hl.Func("f"); f[x] = a[x] + hl.u8(q)
    f.vectorize(x, 16)
    return f, [a, p, q]

@gen
def atomic_hist():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    r = hl.RDom([(0, 1024)], "r")
    f = hl.Func("f"); f[x] = 0
    f[hl.i32(a[r.x])] += 1
    f.update().atomic().parallel(r.x)
    return f, [a]

@gen
def interleave2():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    f = hl.Func("f"); f[x] = hl.select(x % 2 == 0, a[x // 2], a[x // 2] + 1)
    f.vectorize(x, 32)
    return f, [a]

@gen
def extract_elem():
    a = hl.ImageParam(hl.Int(32), 1, "in")
    g = hl.Func("g"); g[x] = a[x] * 2
    f = hl.Func("f"); f[x] = g[x] + g[0]
    g.compute_at(f, x).vectorize(x, 8)
    return f, [a]

@gen
def small_lut():
    a = hl.ImageParam(hl.UInt(8), 1, "in")
    lut = hl.Func("lut"); lut[x] = hl.u8(x * 3)
    f = hl.Func("f"); f[x] = lut[hl.i32(a[x] & 15)]
    lut.compute_root().bound(x, 0, 16)
    f.vectorize(x, 16)
    return f, [a]

@gen
def extern_call():
    a = hl.ImageParam(hl.Int(32), 1, "in")
    f = hl.Func("f"); f[x] = hl.abs(a[x]) + hl.i32(hl.sqrt(hl.f32(a[x])))
    return f, [a]

@gen
def rdom_sum():
    a = hl.ImageParam(hl.UInt(16), 2, "in")
    r = hl.RDom([(0, 8), (0, 8)], "r")
    f = hl.Func("f"); f[x, y] = hl.u32(0)
    f[x, y] += hl.u32(a[x + r.x, y + r.y])
    f.vectorize(x, 16).update().vectorize(x, 16)
    return f, [a]

@gen
def bool_store():
    a = hl.ImageParam(hl.Int(16), 1, "in")
    m = hl.Func("m"); m[x] = a[x] > 5
    f = hl.Func("f"); f[x] = hl.select(m[x] & m[x+1], a[x], hl.i16(0))
    m.compute_root().vectorize(x, 16)
    f.vectorize(x, 16)
    return f, [a]

@gen
def two_stage_if():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    f = hl.Func("f"); f[x, y] = hl.select(y < 10, a[x, y], hl.select(y < 20, a[x, y] * 2, a[x, y] / 3))
    f.vectorize(x, 64)
    return f, [a]

@gen
def int_ops64():
    a = hl.ImageParam(hl.UInt(32), 1, "a")
    b = hl.ImageParam(hl.Int(64), 1, "b")
    f = hl.Func("f"); f[x] = hl.i64(a[x]) * b[x] + hl.i64(hl.u64(a[x]) * hl.u64(0xFFFFFFFFFFFF))
    f.vectorize(x, 8)
    return f, [a, b]

@gen
def float16():
    a = hl.ImageParam(hl.Float(16), 1, "a")
    f = hl.Func("f"); f[x] = a[x] * hl.f16(0.5) if hasattr(hl, "f16") else a[x] * hl.cast(hl.Float(16), 0.5)
    f.vectorize(x, 32)
    return f, [a]

@gen
def sobel():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    i16 = lambda e: hl.i16(e)
    gx = hl.Func("gx"); gx[x, y] = i16(a[x+2, y]) - i16(a[x, y])
    gy = hl.Func("gy"); gy[x, y] = i16(a[x, y+2]) - i16(a[x, y])
    f = hl.Func("f"); f[x, y] = hl.u8_sat(hl.abs(gx[x, y]) + hl.abs(gy[x, y]))
    f.vectorize(x, 32)
    return f, [a]

@gen
def dup_names():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    f = hl.Func("f"); f[x, y] = a[x, y]
    g = hl.Func("g"); g[x, y] = f[x, y] + f[x+1, y]
    f.compute_at(g, y).vectorize(x, 16)
    g.vectorize(x, 16).unroll(y, 2)
    return g, [a]

@gen
def reduce_and_or():
    a = hl.ImageParam(hl.UInt(8), 2, "in")
    r = hl.RDom([(0, 16)], "r")
    f = hl.Func("f"); f[y] = hl.cast(hl.Bool(), True)
    f[y] = f[y] & (a[r.x, y] > 3)
    g = hl.Func("g"); g[y] = hl.cast(hl.Bool(), False)
    g[y] = g[y] | (a[r.x, y] > 3)
    h = hl.Func("h"); h[y] = hl.u8(1)
    h[y] = h[y] * a[r.x, y]
    k = hl.Func("k"); k[y] = hl.i8(0)
    k[y] = k[y] + hl.i8(a[r.x, y])
    m = hl.Func("m"); m[y] = hl.u8(255)
    m[y] = hl.min(m[y], a[r.x, y])
    out = hl.Func("out"); out[y] = hl.select(f[y] & g[y], h[y], hl.u8(k[y])) + m[y]
    for fn in (f, g, h, k, m):
        fn.compute_root().update().atomic().vectorize(r.x)
    return out, [a]

# Other targets: the same pipelines lowered for ARM, HVX and AVX2.
OTHER_TARGETS = [
    ("arm", "arm-64-linux-no_runtime", ["fpir_i16", "reduce_dot", "deinterleave3"]),
    ("hvx", "hexagon-32-noos-hvx-hvx_128-no_runtime", ["fpir_u8", "widening", "sat_cast"]),
    ("avx2", "x86-64-linux-avx2-no_runtime", ["reduce_partial", "interleave2"]),
]

if __name__ == "__main__":
    for name, g in gens.items():
        f, args = g()
        f.compile_to_lowered_stmt(f"{OUT}/{name}.stmt", args, hl.StmtOutputFormat.Text, T)
    for prefix, target, names in OTHER_TARGETS:
        for name in names:
            f, args = gens[name]()
            f.compile_to_lowered_stmt(f"{OUT}/{prefix}_{name}.stmt", args, hl.StmtOutputFormat.Text, hl.Target(target))
