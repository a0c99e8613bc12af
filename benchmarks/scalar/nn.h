/* The NN builders of benchmarks/kernels/_nn.py as plain C: 3x3 stride-2
 * pooling (average or max, optionally fused with a saturating add) and the
 * int16 matrix multiplies (batched, and with a fused epilogue and an
 * optional second matmul). The kind, epilogue and sizes are constants or
 * read from the buffers; every call site passes constants for the former,
 * so after inlining the branches on them fold away.
 */
#ifndef MISAAL_SCALAR_NN_H
#define MISAAL_SCALAR_NN_H

#include "halide_ops.h"

/* ----- pooling ----------------------------------------------------------------- */

enum pool_kind { POOL_AVERAGE, POOL_MAX };

/* One output pixel's channels: `in` points at the window's first tap
 * (channel 0), s1 and s2 are the input's x and y strides; `add` is the
 * addend's pixel or NULL. */
static inline void pool_pixel(const uint8_t *restrict in, int s1, int s2, const uint8_t *restrict add, uint8_t lo, uint8_t hi,
                              uint8_t *restrict out, int channels, enum pool_kind kind) {
    for (int c = 0; c < channels; c++) {
        uint8_t v;
        if (kind == POOL_AVERAGE) {
            uint16_t total = 0;
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    total = (uint16_t)(total + in[c + i * s1 + j * s2]);
            v = (uint8_t)((uint16_t)(total + 4) / 9);
        } else {
            v = in[c];
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    v = hl_max_u8(v, in[c + i * s1 + j * s2]);
        }
        if (add)
            v = hl_saturating_add_u8(v, add[c]);
        out[c] = hl_clamp_u8(v, lo, hi);
    }
}

/* output(c, x, y) = clamp(pool of input(c, 2x+i, 2y+j) [+sat addend(c, x, y)], lo, hi);
 * addend may be NULL. */
static inline int pool(struct halide_buffer_t *input, struct halide_buffer_t *addend, uint8_t lo, uint8_t hi,
                       struct halide_buffer_t *output, enum pool_kind kind) {
    const int channels = output->dim[0].extent, w = output->dim[1].extent, h = output->dim[2].extent;
    const int is1 = input->dim[1].stride, is2 = input->dim[2].stride;
    const int os1 = output->dim[1].stride, os2 = output->dim[2].stride;
    const uint8_t *in = input->host;
    uint8_t *out = output->host;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *add = addend ? addend->host + (size_t)x * addend->dim[1].stride + (size_t)y * addend->dim[2].stride : NULL;
            pool_pixel(in + (size_t)(2 * x) * is1 + (size_t)(2 * y) * is2, is1, is2, add, lo, hi,
                       out + (size_t)x * os1 + (size_t)y * os2, channels, kind);
        }
    return 0;
}

/* ----- matrix multiply ----------------------------------------------------------- */

/* One output row: acc[x] = sum_k i32(a_row[k]) * i32(b(x, k)) for x < n, k <
 * depth, the int32 sum wrapping (kept as uint32). b's rows are b_stride
 * apart. The k loop is outside the x loop, so b is read row by row. */
static inline void matmul_row(const int16_t *restrict a_row, const int16_t *restrict b, int b_stride, int n, int depth,
                              uint32_t *restrict acc) {
    for (int x = 0; x < n; x++)
        acc[x] = 0;
    for (int k = 0; k < depth; k++) {
        const int32_t av = a_row[k];
        const int16_t *b_row = b + (size_t)k * b_stride;
        for (int x = 0; x < n; x++)
            acc[x] += (uint32_t)(av * b_row[x]);
    }
}

/* output(x, y, n) = sum_k a(k, y, n) * b(x, k, n), int16 x int16 -> int32. */
static inline int matmul_batched(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *output) {
    const int n = output->dim[0].extent, m = output->dim[1].extent, batches = output->dim[2].extent;
    const int depth = a->dim[0].extent;
    for (int t = 0; t < batches; t++)
        for (int y = 0; y < m; y++) {
            const int16_t *a_row = (const int16_t *)a->host + (size_t)y * a->dim[1].stride + (size_t)t * a->dim[2].stride;
            const int16_t *b_mat = (const int16_t *)b->host + (size_t)t * b->dim[2].stride;
            /* int32 and uint32 may alias: the accumulator is the output row. */
            uint32_t *acc = (uint32_t *)output->host + (size_t)y * output->dim[1].stride + (size_t)t * output->dim[2].stride;
            matmul_row(a_row, b_mat, b->dim[1].stride, n, depth, acc);
        }
    return 0;
}

enum matmul_epilogue { EPI_NONE, EPI_RELU, EPI_ADD, EPI_GELU };

/* Fixed-point format of the fused kernels: Q8 int16 operands, Q16 int32
 * accumulators; a rounding shift by 8 brings Q16 back to Q8. */
enum { MATMUL_Q = 8 };

/* The epilogue of z = acc + bias: `residual` is the residual's element
 * (EPI_ADD only); q8 (relu before a second matmul) makes relu's result a
 * saturated Q8 int16. GELU's result is always Q8 int16. */
static inline int32_t matmul_epilogue(int32_t z, int32_t residual, enum matmul_epilogue e, int q8) {
    switch (e) {
    case EPI_RELU: {
        int32_t v = hl_max_i32(z, 0);
        return q8 ? hl_i16_sat_i32(hl_rounding_shift_right_i32(v, MATMUL_Q)) : v;
    }
    case EPI_ADD:
        return hl_wrap_add_i32(z, residual);
    case EPI_GELU:
        return hl_gelu_q8(hl_i16_sat_i32(hl_rounding_shift_right_i32(z, MATMUL_Q)));
    default:
        return z;
    }
}

/* int16 matmul + int32 bias(x), then the epilogue; residual is the EPI_ADD
 * matrix or NULL. Without c, the epilogue's value is the output (int16 for
 * EPI_GELU, else int32). With c, it is the Q8 int16 hidden matrix, and the
 * output is the int32 product hidden * c. */
static inline int matmul_fused(struct halide_buffer_t *a, struct halide_buffer_t *b, struct halide_buffer_t *bias,
                               struct halide_buffer_t *residual, struct halide_buffer_t *c, struct halide_buffer_t *output,
                               enum matmul_epilogue e) {
    const int second = c != NULL;
    const int m = output->dim[1].extent, depth = a->dim[0].extent;
    const int n = second ? b->dim[0].extent : output->dim[0].extent; /* the first product's width */
    const int32_t *bias_v = (const int32_t *)bias->host;
    uint32_t *acc = malloc(sizeof *acc * (size_t)n);
    int16_t *hidden = second ? malloc(sizeof *hidden * (size_t)n * (size_t)m) : NULL;
    if (!acc || (second && !hidden)) {
        free(acc);
        free(hidden);
        return halide_error_code_out_of_memory;
    }
    for (int y = 0; y < m; y++) {
        matmul_row((const int16_t *)a->host + (size_t)y * a->dim[1].stride, (const int16_t *)b->host, b->dim[1].stride, n, depth, acc);
        const int32_t *res = residual ? (const int32_t *)residual->host + (size_t)y * residual->dim[1].stride : NULL;
        void *dst = second ? (void *)(hidden + (size_t)y * n) : (void *)(output->host + (size_t)y * output->dim[1].stride * (output->type.bits / 8));
        for (int x = 0; x < n; x++) {
            int32_t v = matmul_epilogue(hl_wrap_add_i32((int32_t)acc[x], bias_v[x]), res ? res[x] : 0, e, second);
            if (second || e == EPI_GELU)
                ((int16_t *)dst)[x] = (int16_t)v;
            else
                ((int32_t *)dst)[x] = v;
        }
    }
    if (second)
        for (int y = 0; y < m; y++)
            matmul_row(hidden + (size_t)y * n, (const int16_t *)c->host, c->dim[1].stride, output->dim[0].extent, n,
                       (uint32_t *)output->host + (size_t)y * output->dim[1].stride);
    free(acc);
    free(hidden);
    return 0;
}

#endif
