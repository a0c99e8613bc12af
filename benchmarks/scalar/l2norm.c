/* l2norm: L2 normalization of each row of a uint8 tensor (TFLite-style).
 * Scalar C baseline of benchmarks/kernels/l2norm.py: per row, the int32 sum
 * of squares of the centred values v = input - input_zero, an integer
 * reciprocal square root r * 2^-(14 + e/2) (_common.rsqrt_q14), and
 *   out = u8_sat(i16_sat(rsr(v * r, 7 + e/2)) +sat 128). */
#include "halide_ops.h"

/* _common.rsqrt_q14: 1/sqrt(s) ~= *r * 2^-(14 + *e/2) for an int32 s >= 1:
 * s = 2^e * f with e even and f in [1, 4) (Q14), a linear first guess and
 * three Newton steps y <- y (3 - f y^2) / 2, in 32-bit integers. */
static void rsqrt_q14(int32_t s, int32_t *r, int32_t *e) {
    *e = (31 - hl_count_leading_zeros_i32(s)) & ~1;
    const int32_t f = hl_shl_i32(s, 14 - *e); /* a negative amount shifts right */
    int32_t y = 19115 - ((f * 2731) >> 14);
    for (int i = 0; i < 3; i++) {
        int32_t y2 = (y * y) >> 14;
        int32_t fy2 = (f * y2) >> 14;
        y = (y * (3 * 16384 - fy2)) >> 15;
    }
    *r = y;
}

static void l2norm_row(const uint8_t *restrict in, uint8_t zero, uint8_t *restrict out, int n) {
    uint32_t sum_sq = 0; /* wrapping int32 */
    for (int x = 0; x < n; x++) {
        int16_t v = (int16_t)(in[x] - zero);
        sum_sq += (uint32_t)(v * v);
    }
    int32_t r, e;
    rsqrt_q14(hl_max_i32((int32_t)sum_sq, 1), &r, &e);
    const int32_t shift = 7 + e / 2;
    for (int x = 0; x < n; x++) {
        int32_t v = (int16_t)(in[x] - zero);
        int32_t scaled = hl_rounding_shift_right_i32(v * r, shift);
        out[x] = hl_u8_sat_i16(hl_saturating_add_i16(hl_i16_sat_i32(scaled), 128));
    }
}

int scalar_l2norm(struct halide_buffer_t *input, uint8_t input_zero, struct halide_buffer_t *output) {
    const int n = output->dim[0].extent, rows = output->dim[1].extent;
    for (int y = 0; y < rows; y++)
        l2norm_row(input->host + (size_t)y * input->dim[1].stride, input_zero, output->host + (size_t)y * output->dim[1].stride, n);
    return 0;
}
