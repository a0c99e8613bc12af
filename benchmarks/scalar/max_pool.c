/* max_pool: 3x3 stride-2 max pooling of a uint8 HWC tensor (channels innermost),
 * the maximum of the 9 taps, clamped to [output_min, output_max].
 * Scalar C baseline of benchmarks/kernels/max_pool.py (_nn.pool); see nn.h. */
#include "nn.h"

int scalar_max_pool(struct halide_buffer_t *input, uint8_t output_min, uint8_t output_max, struct halide_buffer_t *output) {
    return pool(input, NULL, output_min, output_max, output, POOL_MAX);
}
