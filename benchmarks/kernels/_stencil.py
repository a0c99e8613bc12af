"""Builders shared by the K x K image stencils: box blur, dilation, Gaussian
blur and Sobel.

Each takes a uint8 image with a (K-1)-pixel border ("valid" stencil) to a
uint8 W x H image, separably: a horizontal pass as the per-tile producer(s),
the vertical pass in the output, scheduled by schedule_separable (128x32
tiles).
"""

import functools

import halide as hl
from _common import Spec, schedule_separable, weighted, u8, u8_sat, u16, u32, i16

W, H = 2048, 1536   # output extents

# Binomial rows (Gaussian weights, Sobel smoothing) and Sobel derivative rows.
BINOMIAL = {3: [1, 2, 1], 5: [1, 4, 6, 4, 1], 7: [1, 6, 15, 20, 15, 6, 1]}
DERIV = {3: [-1, 0, 1], 5: [-1, -2, 0, 2, 1]}


def _input(K):
    s = Spec()
    inp = s.buffer(hl.UInt(8), "input", [W + K - 1, H + K - 1])
    return s, inp, hl.Var("x"), hl.Var("y")


def _output(s, value, producers, x, y):
    out = hl.Func("output")
    out[x, y] = value
    schedule_separable(out, producers, 128, 32, x, y)
    return s.finish(out, [W, H])


def box_blur(K):
    """Rounded mean of the K x K window. sum_x, the uint16 sum of K horizontal
    neighbours, is the per-tile producer; the output sums K vertical sum_x
    values (at most K*K*255, uint16) and divides by K*K with rounding."""
    s, inp, x, y = _input(K)
    sum_x = hl.Func("sum_x")
    sum_x[x, y] = weighted(lambda i: u16(inp[x + i, y]), [1] * K)
    total = weighted(lambda j: sum_x[x, y + j], [1] * K)
    return _output(s, u8((total + (K * K) // 2) / (K * K)), [sum_x], x, y)


def dilate(K):
    """Grey-scale dilation, the maximum of the K x K window: max_x (max of K
    horizontal neighbours) is the per-tile producer, the output is the max of
    K vertical max_x values."""
    s, inp, x, y = _input(K)
    max_x = hl.Func("max_x")
    max_x[x, y] = functools.reduce(hl.max, [inp[x + i, y] for i in range(K)])
    value = functools.reduce(hl.max, [max_x[x, y + j] for j in range(K)])
    return _output(s, value, [max_x], x, y)


def gaussian(K):
    """Gaussian blur with weights BINOMIAL[K] in both directions: rows (uint16,
    the horizontal pass) is the per-tile producer; the vertical pass is
    divided by the total weight 4^(K-1) with a rounding shift."""
    s, inp, x, y = _input(K)
    w = BINOMIAL[K]
    # The vertical pass reaches 4^(K-1) * 255, which outgrows uint16 at K = 7.
    acc = u16 if sum(w) ** 2 * 255 <= 0xFFFF else u32
    rows = hl.Func("rows")
    rows[x, y] = weighted(lambda i: u16(inp[x + i, y]), w)
    cols = weighted(lambda j: acc(rows[x, y + j]), w)
    return _output(s, u8(hl.rounding_shift_right(cols, 2 * (K - 1))), [rows], x, y)


def sobel(K):
    """Edge magnitude |gx| + |gy| of the K x K Sobel operator (outer products
    of BINOMIAL[K] and DERIV[K]), scaled down for K = 5, clamped to uint8."""
    s, inp, x, y = _input(K)
    smoothed = weighted(lambda i: u16(inp[x + i, y]), BINOMIAL[K])
    smooth_x = hl.Func("smooth_x")
    if K == 3:
        # The vertical derivative is a single difference, so gy is the absd
        # of two uint16 rows and needs no signed type.
        smooth_x[x, y] = smoothed
        gy = hl.absd(smooth_x[x, y], smooth_x[x, y + 2])
    else:
        smooth_x[x, y] = i16(smoothed)
        gy = hl.abs(weighted(lambda j: smooth_x[x, y + j], DERIV[K]))
    # The 3x3 producer keeps its name, diff_x, which its committed Stmt uses.
    deriv_x = hl.Func("diff_x" if K == 3 else "deriv_x")
    deriv_x[x, y] = weighted(lambda i: i16(inp[x + i, y]), DERIV[K])
    gx = hl.abs(weighted(lambda j: deriv_x[x, y + j], BINOMIAL[K]))
    # The 5x5 response is 12x the 3x3 one; 1/16 brings it close to the 3x3 scale.
    shift = 0 if K == 3 else 4
    return _output(s, u8_sat((gx + gy) >> shift), [smooth_x, deriv_x], x, y)
