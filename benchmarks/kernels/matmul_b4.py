"""matmul_b4: batched int16 x int16 -> int32 matrix multiply, batch 4.

a is M x K and b is K x N per batch (row-major, dim 0 innermost), M = N = K
= 256; out(x, y, n) = sum_k i32(a(k, y, n)) * i32(b(x, k, n)). Register-
blocked: 64x4 output tiles, 16 int32 accumulator vectors, reduction loop
outside the unrolled tile.
"""

from _nn import matmul_batched


def build():
    return matmul_batched(4)
