/* matmul_bias_relu: int16 matmul + int32 bias(x), then ReLU; int32 out.
 * Scalar C baseline of benchmarks/kernels/matmul_bias_relu.py (_nn.matmul_fused); see nn.h. */
#include "nn.h"

int scalar_matmul_bias_relu(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias, struct halide_buffer_t *output) {
    return matmul_fused(a, b, bias, NULL, NULL, output, EPI_RELU);
}
