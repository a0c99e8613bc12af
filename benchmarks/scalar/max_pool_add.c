/* max_pool_add: 3x3 stride-2 max pooling of a uint8 HWC tensor (channels innermost),
 * the maximum of the 9 taps, fused with a saturating uint8 add of addend, clamped to [output_min, output_max].
 * Scalar C baseline of benchmarks/kernels/max_pool_add.py (_nn.pool); see nn.h. */
#include "nn.h"

int scalar_max_pool_add(struct halide_buffer_t *input, struct halide_buffer_t *addend, uint8_t output_min, uint8_t output_max,
                        struct halide_buffer_t *output) {
    return pool(input, addend, output_min, output_max, output, POOL_MAX);
}
