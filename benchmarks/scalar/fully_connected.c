/* fully_connected: int8 matrix-vector product with int32 accumulation.
 * Scalar C baseline of benchmarks/kernels/fully_connected.py:
 *   out(n) = clamp(i8_sat(sat_i16(round(rmsr(acc(n), output_multiplier, 31) >> output_shift)) +sat output_zero), lo, hi)
 *   acc(n) = bias(n) + sum_k i32(i16(filter(n, k)) * i16(input(k)))   (wrapping int32)
 * The filter is stored output-major (n innermost), so the k loop is outside
 * and the n loop reads it contiguously. */
#include "halide_ops.h"

static void fc_accumulate(const int8_t *restrict input, int depth, const int8_t *restrict filt, int fs1, const int32_t *restrict bias,
                          int n, uint32_t *restrict acc) {
    for (int i = 0; i < n; i++)
        acc[i] = (uint32_t)bias[i];
    for (int k = 0; k < depth; k++) {
        const int8_t v = input[k];
        const int8_t *f = filt + (size_t)k * fs1;
        for (int i = 0; i < n; i++)
            acc[i] += (uint32_t)(int32_t)(int16_t)(f[i] * v); /* widening_mul to int16, then i32 */
    }
}

int scalar_fully_connected(struct halide_buffer_t *input, struct halide_buffer_t *filter, struct halide_buffer_t *bias,
                           int32_t output_multiplier, int32_t output_shift, int8_t output_zero, int8_t output_min, int8_t output_max,
                           struct halide_buffer_t *output) {
    const int n = output->dim[0].extent;
    uint32_t *acc = malloc(sizeof *acc * (size_t)n);
    if (!acc)
        return halide_error_code_out_of_memory;
    fc_accumulate((const int8_t *)input->host, input->dim[0].extent, (const int8_t *)filter->host, filter->dim[1].stride,
                  (const int32_t *)bias->host, n, acc);
    int8_t *out = (int8_t *)output->host;
    for (int i = 0; i < n; i++) {
        int32_t scaled = hl_rounding_mul_shift_right_i32((int32_t)acc[i], output_multiplier, 31);
        int16_t s16 = hl_i16_sat_i32(hl_rounding_shift_right_i32(scaled, output_shift));
        out[i] = hl_clamp_i8(hl_i8_sat_i16(hl_saturating_add_i16(s16, (int16_t)output_zero)), output_min, output_max);
    }
    free(acc);
    return 0;
}
