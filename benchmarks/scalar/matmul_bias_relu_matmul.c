/* matmul_bias_relu_matmul: hidden = sat_i16(round(max(a*b + bias, 0) >> 8)) (Q8 int16); out = hidden * c, int32.
 * Scalar C baseline of benchmarks/kernels/matmul_bias_relu_matmul.py (_nn.matmul_fused); see nn.h. */
#include "nn.h"

int scalar_matmul_bias_relu_matmul(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias, struct halide_buffer_t *c, struct halide_buffer_t *output) {
    return matmul_fused(a, b, bias, NULL, c, output, EPI_RELU);
}
