"""Builders shared by the NN kernels: pooling and (fused) matrix multiplies."""

import functools

import halide as hl
from _common import Spec, V8, V32, lanes, vectorize_unrolled, gelu_q8, u8, u16, i32, i16_sat

# ----- pooling --------------------------------------------------------------

POOL_C, POOL_W, POOL_H = 64, 256, 256   # output extents (channels innermost)


def pool(kind, with_add):
    """3x3, stride-2 pooling over an HWC uint8 tensor (channels innermost).

    kind "average": uint16 sum of the 9 taps, divided by 9 with rounding;
    kind "max": maximum of the 9 taps. with_add fuses a saturating uint8
    add of a second tensor of the output's shape. The result is clamped to
    [output_min, output_max]. Vectorized over the 64 channels (one uint8
    vector), two output columns unrolled.
    """
    s = Spec()
    C, W, H = POOL_C, POOL_W, POOL_H
    inp = s.buffer(hl.UInt(8), "input", [C, 2 * W + 1, 2 * H + 1])
    other = s.buffer(hl.UInt(8), "addend", [C, W, H]) if with_add else None
    lo = s.scalar(hl.UInt(8), "output_min", 0)
    hi = s.scalar(hl.UInt(8), "output_max", 255)
    c, x, y = hl.Var("c"), hl.Var("x"), hl.Var("y")

    taps = [inp[c, 2 * x + i, 2 * y + j] for j in range(3) for i in range(3)]
    if kind == "average":
        total = functools.reduce(lambda a, b: a + b, [u16(t) for t in taps])
        pooled = u8((total + 4) / 9)
    else:
        pooled = functools.reduce(hl.max, taps)
    if with_add:
        pooled = hl.saturating_add(pooled, other[c, x, y])
    out = hl.Func("output")
    out[c, x, y] = hl.clamp(pooled, lo, hi)

    xo, xi = hl.Var("xo"), hl.Var("xi")
    # Never wider than the channels: with HVX's 128-lane V8, vectorizing 64
    # channels by 128 would read past every buffer's channel extent.
    out.split(x, xo, xi, 2).reorder(c, xi, xo, y).vectorize(c, min(V8, C)).unroll(xi)
    return s.finish(out, [C, W, H])


# ----- matrix multiply ------------------------------------------------------

MM = 256              # M = N = K
TILE_X, TILE_Y = 64, 4  # accumulator tile: 4 int32 vectors x 4 rows = 16 zmm


def matmul_acc(name, rname, a, b, k_extent, x, y, batch=()):
    """acc(x, y, ...) = sum_k i32(a(k, y, ...)) * i32(b(x, k, ...)): a is
    M x K and b is K x N, both row-major (dim 0 innermost)."""
    k = hl.RDom([(0, k_extent)], rname)
    acc = hl.Func(name)
    args = [x, y] + list(batch)
    acc[args] = i32(0)
    acc[args] = acc[args] + i32(a[[k.x, y] + list(batch)]) * i32(b[[x, k.x] + list(batch)])
    return acc, k


def schedule_tile(f, acc, x, y, k, tag, out_lanes):
    """Register-blocked matmul schedule: f is tiled 64x4 (its inner tile
    vectorized by out_lanes and unrolled), acc is computed per tile, its
    reduction loop outermost and the 4x4 int32 vectors of the tile unrolled."""
    xo, yo, xi, yi = (hl.Var(n + tag) for n in ("xo", "yo", "xi", "yi"))
    f.tile(x, y, xo, yo, xi, yi, TILE_X, TILE_Y)
    vectorize_unrolled(f, xi, out_lanes, "xv" + tag)
    f.unroll(yi)
    acc.compute_at(f, xo)
    vectorize_unrolled(acc, x, V32, "xa" + tag)
    acc.unroll(y)
    xu = hl.Var("xu" + tag)
    acc.update().reorder(x, y, k.x).split(x, xu, x, V32).vectorize(x).unroll(xu).unroll(y)
    return xo, yo


def matmul_batched(batch):
    """Batched int16 x int16 -> int32 matrix multiply, 256x256x256 per batch."""
    s = Spec()
    a = s.buffer(hl.Int(16), "a", [MM, MM, batch])
    b = s.buffer(hl.Int(16), "b", [MM, MM, batch])
    x, y, n = hl.Var("x"), hl.Var("y"), hl.Var("n")
    acc, k = matmul_acc("acc", "k", a, b, MM, x, y, [n])
    out = hl.Func("output")
    out[x, y, n] = acc[x, y, n]
    schedule_tile(out, acc, x, y, k, "", V32)
    return s.finish(out, [MM, MM, batch])


# Fixed-point format of the fused kernels: activations and weights are Q8
# int16, so products and accumulators (and biases) are Q16 int32; a rounding
# shift by 8 brings a Q16 value back to Q8 int16.
Q = 8


def matmul_fused(epilogue, second_matmul=False):
    """int16 matmul (256x256x256) + int32 bias per output column, then:

    epilogue "none": out = acc + bias (int32)
    epilogue "relu": out = max(acc + bias, 0) (int32)
    epilogue "add":  out = acc + bias + residual(x, y) (int32)
    epilogue "gelu": out = gelu(Q8(acc + bias)) (int16, Q8)
    second_matmul: the epilogue's result, as Q8 int16 (relu is followed by a
    rounding shift to Q8 and saturation), is multiplied by a second 256x256
    int16 matrix; out is that product's int32 accumulator.
    """
    s = Spec()
    a = s.buffer(hl.Int(16), "a", [MM, MM])
    b = s.buffer(hl.Int(16), "b", [MM, MM])
    bias = s.buffer(hl.Int(32), "bias", [MM])
    residual = s.buffer(hl.Int(32), "residual", [MM, MM]) if epilogue == "add" else None
    c = s.buffer(hl.Int(16), "c", [MM, MM]) if second_matmul else None
    x, y = hl.Var("x"), hl.Var("y")

    acc1, k1 = matmul_acc("acc1" if second_matmul else "acc", "k1" if second_matmul else "k", a, b, MM, x, y)
    z = acc1[x, y] + bias[x]
    if epilogue == "none":
        value = z
    elif epilogue == "relu":
        value = hl.max(z, 0)
        if second_matmul:
            value = i16_sat(hl.rounding_shift_right(value, Q))
    elif epilogue == "add":
        value = z + residual[x, y]
    elif epilogue == "gelu":
        value = gelu_q8(i16_sat(hl.rounding_shift_right(z, Q)))
    else:
        raise ValueError(epilogue)

    if not second_matmul:
        out = hl.Func("output")
        out[x, y] = value
        # One register of the output type, within the tile (HVX's 128-byte
        # register holds more 8-bit lanes than a tile is wide).
        schedule_tile(out, acc1, x, y, k1, "", min(lanes(out.type()), TILE_X))
        return s.finish(out, [MM, MM])

    hidden = hl.Func("hidden")
    hidden[x, y] = value
    acc2, k2 = matmul_acc("acc2", "k2", hidden, c, MM, x, y)
    out = hl.Func("output")
    out[x, y] = acc2[x, y]
    xo, yo = schedule_tile(out, acc2, x, y, k2, "", V32)
    # The hidden rows a tile of the second product needs (4 rows x 256) are
    # computed per row of tiles, with the same register-blocked schedule.
    hidden.compute_at(out, yo)
    schedule_tile(hidden, acc1, x, y, k1, "_h", min(lanes(hidden.type()), TILE_X))
    return s.finish(out, [MM, MM])
