/* matmul_bias_gelu: int16 matmul + int32 bias(x), rounded to Q8 int16 with saturation, then gelu_q8; int16 Q8 out.
 * Scalar C baseline of benchmarks/kernels/matmul_bias_gelu.py (_nn.matmul_fused); see nn.h. */
#include "nn.h"

int scalar_matmul_bias_gelu(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias, struct halide_buffer_t *output) {
    return matmul_fused(a, b, bias, NULL, NULL, output, EPI_GELU);
}
