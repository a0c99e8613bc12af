/* matmul_bias: int16 matmul (Q8 operands, Q16 int32 accumulator) + int32 bias(x); int32 out.
 * Scalar C baseline of benchmarks/kernels/matmul_bias.py (_nn.matmul_fused); see nn.h. */
#include "nn.h"

int scalar_matmul_bias(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias, struct halide_buffer_t *output) {
    return matmul_fused(a, b, bias, NULL, NULL, output, EPI_NONE);
}
