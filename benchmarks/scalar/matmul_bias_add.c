/* matmul_bias_add: int16 matmul + int32 bias(x) + int32 residual(x, y), wrapping; int32 out.
 * Scalar C baseline of benchmarks/kernels/matmul_bias_add.py (_nn.matmul_fused); see nn.h. */
#include "nn.h"

int scalar_matmul_bias_add(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias, struct halide_buffer_t *residual, struct halide_buffer_t *output) {
    return matmul_fused(a, b, bias, residual, NULL, output, EPI_ADD);
}
