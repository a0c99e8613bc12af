/* mul: quantized elementwise multiply of two uint8 tensors (TFLite-style).
 * Scalar C baseline of benchmarks/kernels/mul.py:
 *   out = requantize_u8(i32((a - z1) * (b - z2)), output_multiplier, output_shift, zo, lo, hi)
 * with an int16 x int16 -> int32 product. */
#include "halide_ops.h"

static void mul_row(const uint8_t *restrict a, uint8_t z1, const uint8_t *restrict b, uint8_t z2, uint8_t zo, int32_t mult,
                    int32_t shift, uint8_t lo, uint8_t hi, uint8_t *restrict out, int w) {
    for (int x = 0; x < w; x++) {
        int32_t prod = (int16_t)(a[x] - z1) * (int16_t)(b[x] - z2);
        out[x] = hl_requantize_u8(prod, mult, shift, zo, lo, hi);
    }
}

int scalar_mul(struct halide_buffer_t *input1, uint8_t input1_zero, struct halide_buffer_t *input2, uint8_t input2_zero,
               uint8_t output_zero, int32_t output_multiplier, int32_t output_shift, uint8_t output_min, uint8_t output_max,
               struct halide_buffer_t *output) {
    const int w = output->dim[0].extent, h = output->dim[1].extent;
    for (int y = 0; y < h; y++)
        mul_row(input1->host + (size_t)y * input1->dim[1].stride, input1_zero, input2->host + (size_t)y * input2->dim[1].stride,
                input2_zero, output_zero, output_multiplier, output_shift, output_min, output_max,
                output->host + (size_t)y * output->dim[1].stride, w);
    return 0;
}
