/* softmax: fixed-point softmax over each row of a uint8 tensor.
 * Scalar C baseline of benchmarks/kernels/softmax.py, per row:
 *   max   the row maximum (uint8, from 0);
 *   exp2  2^(t/256) in Q15 (uint16) for t = (input - max) * beta <= 0
 *         (_common.exp2_neg_q15: shift for the integer part, cubic for the fraction);
 *   sum   int32 row sum of exp2;
 *   inv   2^30 / sum (Halide's flooring division);
 *   out   u8_sat(rsr(exp2 * inv, 22)).
 * No floating point. */
#include "halide_ops.h"

/* Q15 coefficients of 2^f = 1 + f (A1 + f (A2 + f A3)), f in [0, 1). */
enum { EXP2_A1 = 22790, EXP2_A2 = 7414, EXP2_A3 = 2563 };

/* _common.exp2_neg_q15: 2^(t/256) in Q15 for an int32 t <= 0. */
static inline int32_t exp2_neg_q15(int32_t t) {
    int32_t ip = t >> 8;  /* floor */
    int32_t fr = t & 255; /* Q8 fraction */
    int32_t p = ((EXP2_A3 * fr) >> 8) + EXP2_A2;
    p = ((p * fr) >> 8) + EXP2_A1;
    p = (p * fr) >> 8;
    int32_t mant = 32768 + p;
    return hl_rounding_shift_right_i32(mant, hl_min_i32(-ip, 16));
}

static void softmax_row(const uint8_t *restrict in, int32_t beta, uint16_t *restrict exp2, uint8_t *restrict out, int n) {
    uint8_t max_x = 0;
    for (int x = 0; x < n; x++)
        max_x = hl_max_u8(max_x, in[x]);
    for (int x = 0; x < n; x++) {
        int32_t diff = (int16_t)(in[x] - max_x);
        exp2[x] = (uint16_t)exp2_neg_q15((int32_t)((uint32_t)diff * (uint32_t)beta)); /* wrapping int32 multiply */
    }
    uint32_t sum_exp = 0; /* wrapping int32 */
    for (int x = 0; x < n; x++)
        sum_exp += exp2[x];
    const int32_t inv = hl_div_i32(1 << 30, (int32_t)sum_exp);
    for (int x = 0; x < n; x++)
        out[x] = hl_u8_sat_i32(hl_rounding_shift_right_i32((int32_t)exp2[x] * inv, 22));
}

int scalar_softmax(struct halide_buffer_t *input, int32_t beta, struct halide_buffer_t *output) {
    const int n = output->dim[0].extent, rows = output->dim[1].extent;
    uint16_t *exp2 = malloc(sizeof *exp2 * (size_t)n);
    if (!exp2)
        return halide_error_code_out_of_memory;
    for (int y = 0; y < rows; y++)
        softmax_row(input->host + (size_t)y * input->dim[1].stride, beta, exp2, output->host + (size_t)y * output->dim[1].stride, n);
    free(exp2);
    return 0;
}
