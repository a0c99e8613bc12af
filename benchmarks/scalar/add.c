/* add: quantized elementwise add of two uint8 tensors (TFLite-style).
 * Scalar C baseline of benchmarks/kernels/add.py:
 *   out = clamp(u8_sat(i16_sat(rsr(m1 (a - z1) + m2 (b - z2), 14)) +sat zo), lo, hi)
 * with int16 x int16 -> int32 products and Halide's rounding shift. */
#include "halide_ops.h"

static void add_row(const uint8_t *restrict a, uint8_t z1, int16_t m1, const uint8_t *restrict b, uint8_t z2, int16_t m2, uint8_t zo,
                    uint8_t lo, uint8_t hi, uint8_t *restrict out, int w) {
    for (int x = 0; x < w; x++) {
        int32_t sa = (int16_t)(a[x] - z1) * m1;
        int32_t sb = (int16_t)(b[x] - z2) * m2;
        int16_t total = hl_i16_sat_i32(hl_rounding_shift_right_i32(sa + sb, 14));
        out[x] = hl_clamp_u8(hl_u8_sat_i16(hl_saturating_add_i16(total, (int16_t)zo)), lo, hi);
    }
}

int scalar_add(struct halide_buffer_t *input1, uint8_t input1_zero, int16_t input1_multiplier, struct halide_buffer_t *input2,
               uint8_t input2_zero, int16_t input2_multiplier, uint8_t output_zero, uint8_t output_min, uint8_t output_max,
               struct halide_buffer_t *output) {
    const int w = output->dim[0].extent, h = output->dim[1].extent;
    for (int y = 0; y < h; y++)
        add_row(input1->host + (size_t)y * input1->dim[1].stride, input1_zero, input1_multiplier,
                input2->host + (size_t)y * input2->dim[1].stride, input2_zero, input2_multiplier, output_zero, output_min, output_max,
                output->host + (size_t)y * output->dim[1].stride, w);
    return 0;
}
