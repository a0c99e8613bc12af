"""Shared pieces of the kernel generators in this directory.

Every kernel module defines `build()`, which returns the dict made by
`Spec.finish`:

    {
        "output": hl.Func,            # the pipeline's output Func
        "inputs": [ImageParam|Param], # arguments, in the generated function's order
        "sizes":  {name: [extents]},  # every input buffer and the output (dim 0 innermost)
        "values": {name: int},        # benchmark value of every scalar Param
    }

Buffer mins are all 0 (inputs are constrained to min 0, outputs are bounded
to [0, extent)). Everything is integer or fixed point; nothing here touches a
float, not even for index math.

Schedules target 512-bit x86 vectors without parallel(): the natural vector
width of a Func is 512 bits of its own type (64 lanes of 8 bits, 32 of 16,
16 of 32), and every vectorized loop covers an exact multiple of it. For
HVX the width is 1024 bits (see VECTOR_BITS below).
"""

import os

import halide as hl

# The register width the schedules are written for, in bits: 512 (x86
# AVX-512, and the ARM suite, whose Stmt LLVM splits into 128-bit halves).
# generate.py sets MISAAL_VECTOR_BITS=1024 for HVX's 128-byte mode, whose
# natural vector is 128 bytes; every kernel reads the widths below.
VECTOR_BITS = int(os.environ.get("MISAAL_VECTOR_BITS", "512"))

# Natural vector widths for VECTOR_BITS-bit registers (64/32/16 at 512).
V8 = VECTOR_BITS // 8
V16 = VECTOR_BITS // 16
V32 = VECTOR_BITS // 32


def lanes(t):
    """Lanes of type t in a VECTOR_BITS-bit register."""
    return VECTOR_BITS // t.bits()


class Spec:
    """Collects a kernel's arguments with their benchmark sizes and values."""

    def __init__(self):
        self.inputs = []
        self.sizes = {}
        self.values = {}

    def buffer(self, t, name, dims):
        """An input buffer with the given extents (dim 0 innermost), all mins 0."""
        p = hl.ImageParam(t, len(dims), name)
        for d in range(len(dims)):
            p.dim(d).set_min(0)
        self.inputs.append(p)
        self.sizes[name] = list(dims)
        return p

    def scalar(self, t, name, value):
        """A scalar parameter with its benchmark value."""
        p = hl.Param(t, name, value)
        self.inputs.append(p)
        self.values[name] = value
        return p

    def finish(self, output, dims):
        """Bounds the output to [0, dims[i]) in every dimension and packages the kernel."""
        for v, e in zip(output.args(), dims):
            output.bound(v, 0, e)
        self.sizes[output.name()] = list(dims)
        return {
            "output": output,
            "inputs": list(self.inputs),
            "sizes": dict(self.sizes),
            "values": dict(self.values),
        }


# ----- casts ----------------------------------------------------------------

u8, u16, u32 = hl.u8, hl.u16, hl.u32
i8, i16, i32 = hl.i8, hl.i16, hl.i32
u8_sat, i8_sat, i16_sat = hl.u8_sat, hl.i8_sat, hl.i16_sat


# ----- schedule helpers -----------------------------------------------------

def vectorize_unrolled(f, v, width, name):
    """Split v by the vector width, vectorize the inner part and unroll the
    outer part (used where v's extent is a small multiple of the width)."""
    vo = hl.Var(name)
    f.split(v, vo, v, width).vectorize(v).unroll(vo)
    return f


def schedule_separable(out, producers, tile_w, tile_h, x, y):
    """Production-style schedule for a two-pass stencil whose producers only
    shift x and whose consumer only shifts y: tile the output, compute each
    producer per tile, vectorize both by the natural u8 width. The producers'
    x-extent is exactly the tile width, so no loop needs a tail."""
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    out.tile(x, y, xo, yo, xi, yi, tile_w, tile_h).vectorize(xi, V8)
    for p in producers:
        p.compute_at(out, xo).vectorize(p.args()[0], V8)


# ----- fixed-point arithmetic -------------------------------------------------

def requantize_u8(acc, multiplier, shift, zero, lo, hi):
    """int32 accumulator -> uint8, the usual quantized-NN epilogue:
    round(acc * multiplier / 2^31) (multiplier is Q31), a rounding right shift,
    saturate to int16, add the output zero point with saturation, saturate to
    uint8, clamp to the activation range [lo, hi]."""
    scaled = hl.rounding_mul_shift_right(acc, multiplier, 31)
    scaled = i16_sat(hl.rounding_shift_right(scaled, shift))
    return hl.clamp(u8_sat(hl.saturating_add(scaled, i16(zero))), lo, hi)


# 2^f for f in [0, 1) as 1 + f*(A1 + f*(A2 + f*A3)), coefficients Q15, chosen
# so that p(0) = 1 and p(1) ~= 2; relative error below 1.2e-4 for 8-bit f.
EXP2_A1, EXP2_A2, EXP2_A3 = 22790, 7414, 2563


def exp2_neg_q15(t_q8):
    """2^(t/256) in Q15 for an int32 t <= 0 (t in Q8 log2 units).

    Integer part -> right shift, fractional part -> cubic polynomial.
    Result in [0, 32768]; exactly 32768 for t = 0."""
    ip = t_q8 >> 8          # floor, <= 0
    fr = t_q8 & 255         # fraction, Q8 in [0, 256)
    p = ((EXP2_A3 * fr) >> 8) + EXP2_A2
    p = ((p * fr) >> 8) + EXP2_A1
    p = (p * fr) >> 8
    mant = 32768 + p        # 2^fr in Q15, [32768, 65536)
    return hl.rounding_shift_right(mant, hl.min(-ip, 16))


def rsqrt_q14(s):
    """Integer reciprocal square root of an int32 s >= 1.

    Returns (r, e) with 1/sqrt(s) ~= r * 2^-(14 + e/2): s = 2^e * f with e
    even and f in [1, 4) (Q14), r ~= 2^14/sqrt(f) from a linear first guess
    and three Newton steps y <- y*(3 - f*y^2)/2, all in 32-bit integers.
    Relative error below 1.5e-4."""
    e = (31 - hl.count_leading_zeros(s)) & ~1
    f = s << (14 - e)       # a negative shift amount shifts right
    y = 19115 - ((f * 2731) >> 14)      # (7 - f)/6, Q14
    for _ in range(3):
        y2 = (y * y) >> 14
        fy2 = (f * y2) >> 14
        y = (y * (3 * 16384 - fy2)) >> 15
    return y, e


def gelu_q8(x):
    """GELU of an int16 x in Q8 (real value x/256), result int16 Q8.

    Integer-only approximation of I-BERT (Kim et al., 2021):
    gelu(x) = x/2 * (1 + erf(x/sqrt 2)), with
    erf(u) ~= sign(u) * (1 - 0.2888 * (min(|u|, 1.769) - 1.769)^2).
    Max abs error about 0.018 against the exact GELU."""
    a = i32(hl.abs(x))                            # |x|, Q8
    u = hl.min((a * 181) >> 8, 453)               # |x|/sqrt(2) clipped at 1.769, Q8
    d = 453 - u
    erf_abs = 16384 - ((d * d * 4732) >> 16)      # Q14
    erf = hl.select(x < 0, -erf_abs, erf_abs)
    return i16((i32(x) * (16384 + erf)) >> 15)


# ----- stencil helpers --------------------------------------------------------

def weighted(f, weights):
    """Sum over i of weights[i] * f(i), left to right, skipping zero weights
    and writing weights of +-1 without a multiply; f(i) gives the i-th tap."""
    terms = []
    for i, w in enumerate(weights):
        if w == 0:
            continue
        t = f(i)
        terms.append((w, t))
    w0, total = terms[0]
    total = total if w0 == 1 else (-total if w0 == -1 else total * w0)
    for w, t in terms[1:]:
        if w == 1:
            total = total + t
        elif w == -1:
            total = total - t
        elif w < 0:
            total = total - t * (-w)
        else:
            total = total + t * w
    return total
