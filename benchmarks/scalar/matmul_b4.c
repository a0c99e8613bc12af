/* matmul_b4: batched int16 x int16 -> int32 matrix multiply, batch 4:
 * out(x, y, n) = sum_k i32(a(k, y, n)) * i32(b(x, k, n)), wrapping int32 sums.
 * Scalar C baseline of benchmarks/kernels/matmul_b4.py (_nn.matmul_batched); see nn.h. */
#include "nn.h"

int scalar_matmul_b4(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *output) { return matmul_batched(a, b, output); }
