/* The K x K image stencils of benchmarks/kernels/_stencil.py as plain C:
 * box blur, dilation, Gaussian blur and Sobel, each a horizontal pass then a
 * vertical pass over a uint8 image carrying a (K-1)-pixel border ("valid":
 * output (x, y) reads input (x .. x+K-1, y .. y+K-1)).
 *
 * The 3x3 median of benchmarks/kernels/median3x3.py is here too: it is
 * separable the same way (sort each row of three, then combine three rows).
 *
 * stencil_separable() runs the two passes: the horizontal pass of each input
 * row is computed once into a ring of the last K rows, and each output row is
 * the vertical pass over the K ring rows it needs. Each pass of a stencil is
 * one function: the horizontal one maps an input row `in` (w + k - 1 pixels)
 * to a ring row `dst`, the vertical one maps rows[j], the ring row of input
 * row y + j, to output row y. The kind and K are constants at every call
 * site, so after inlining the tap loops unroll and the x loops are left for
 * the compiler to vectorize.
 */
#ifndef MISAAL_SCALAR_STENCIL_H
#define MISAAL_SCALAR_STENCIL_H

#include <string.h>

#include "halide_ops.h"

enum { STENCIL_MAX_K = 7 };

/* Box weights, binomial rows (Gaussian weights, Sobel smoothing), Sobel
 * derivative rows. */
static const int ONES[STENCIL_MAX_K] = {1, 1, 1, 1, 1, 1, 1};
static const int BINOMIAL[STENCIL_MAX_K + 1][STENCIL_MAX_K] = {
    [3] = {1, 2, 1}, [5] = {1, 4, 6, 4, 1}, [7] = {1, 6, 15, 20, 15, 6, 1}};
static const int DERIV[STENCIL_MAX_K + 1][STENCIL_MAX_K] = {[3] = {-1, 0, 1}, [5] = {-1, -2, 0, 2, 1}};

/* The horizontal passes go over the row once per tap (dst(x) op= tap i of
 * x), so that each x loop loads one input byte per iteration: with all taps
 * of x in one iteration, clang 14's GVN carries the loaded bytes over to the
 * next iteration (load PRE across the back edge), and the vectorizer rejects
 * the resulting recurrence. The values are the same either way. */

/* _common.weighted along x: dst(x) = sum_i weights[i] * in(x + i), in
 * wrapping 16-bit arithmetic (the bits of Halide's uint16 or int16 sum). */
static inline void weighted_h(const uint8_t *in, uint16_t *dst, int w, int k, const int *weights) {
    for (int x = 0; x < w; x++)
        dst[x] = (uint16_t)(in[x] * weights[0]);
    for (int i = 1; i < k; i++)
        for (int x = 0; x < w; x++)
            dst[x] = (uint16_t)(dst[x] + in[x + i] * weights[i]);
}

/* ----- box blur: uint16 sums, rounded division by k*k ----------------------- */

static inline void box_blur_h(const uint8_t *in, void *dst, int w, int k) { weighted_h(in, dst, w, k, ONES); }

static inline void box_blur_v(const void *const *rows, uint8_t *out, int w, int k) {
    const uint16_t n = (uint16_t)(k * k);
    for (int x = 0; x < w; x++) {
        uint16_t total = 0;
        for (int j = 0; j < k; j++)
            total = (uint16_t)(total + ((const uint16_t *)rows[j])[x]);
        out[x] = (uint8_t)((uint16_t)(total + n / 2) / n);
    }
}

/* ----- dilation: maximum of the window ---------------------------------------- */

static inline void dilate_h(const uint8_t *in, void *dst, int w, int k) {
    uint8_t *max_x = memcpy(dst, in, (size_t)w);
    for (int i = 1; i < k; i++)
        for (int x = 0; x < w; x++)
            max_x[x] = hl_max_u8(max_x[x], in[x + i]);
}

static inline void dilate_v(const void *const *rows, uint8_t *out, int w, int k) {
    for (int x = 0; x < w; x++) {
        uint8_t m = ((const uint8_t *)rows[0])[x];
        for (int j = 1; j < k; j++)
            m = hl_max_u8(m, ((const uint8_t *)rows[j])[x]);
        out[x] = m;
    }
}

/* ----- Gaussian: binomial weights, rounding shift by 2(k-1) ------------------- */

static inline void gaussian_h(const uint8_t *in, void *dst, int w, int k) { weighted_h(in, dst, w, k, BINOMIAL[k]); }

/* The vertical sum reaches 4^(k-1) * 255: uint16 up to k = 5, uint32 at k = 7. */
static inline void gaussian_v(const void *const *rows, uint8_t *out, int w, int k) {
    const int shift = 2 * (k - 1);
    if ((1 << shift) * 255 <= 0xFFFF) {
        for (int x = 0; x < w; x++) {
            uint16_t cols = 0;
            for (int j = 0; j < k; j++)
                cols = (uint16_t)(cols + ((const uint16_t *)rows[j])[x] * BINOMIAL[k][j]);
            out[x] = (uint8_t)hl_rounding_shift_right_u16(cols, shift);
        }
    } else {
        for (int x = 0; x < w; x++) {
            uint32_t cols = 0;
            for (int j = 0; j < k; j++)
                cols += (uint32_t)((const uint16_t *)rows[j])[x] * (uint32_t)BINOMIAL[k][j];
            out[x] = (uint8_t)hl_rounding_shift_right_u32(cols, shift);
        }
    }
}

/* ----- Sobel: |gx| + |gy|, scaled by 1/16 for k = 5, saturated to uint8 ------ */

/* A ring row holds smooth_x (the binomial row; uint16 for k = 3, int16 for
 * k = 5, the same bits) then deriv_x (the derivative row, int16). */
static inline void sobel_h(const uint8_t *in, void *dst, int w, int k) {
    uint16_t *smooth_x = dst, *deriv_x = smooth_x + w;
    weighted_h(in, smooth_x, w, k, BINOMIAL[k]);
    weighted_h(in, deriv_x, w, k, DERIV[k]);
}

static inline void sobel_v(const void *const *rows, uint8_t *out, int w, int k) {
    const int shift = k == 3 ? 0 : 4;
    for (int x = 0; x < w; x++) {
        int gx_sum = 0, gy_sum = 0;
        for (int j = 0; j < k; j++) {
            const uint16_t *smooth_x = rows[j];
            const int16_t *deriv_x = (const int16_t *)rows[j] + w;
            gx_sum += deriv_x[x] * BINOMIAL[k][j];
            gy_sum += (int16_t)smooth_x[x] * DERIV[k][j];
        }
        uint16_t gx = hl_abs_i16((int16_t)gx_sum);
        /* k = 3: gy is the absd of two uint16 rows; k = 5: abs of an int16 sum. */
        uint16_t gy = k == 3 ? hl_absd_u16(((const uint16_t *)rows[0])[x], ((const uint16_t *)rows[2])[x]) : hl_abs_i16((int16_t)gy_sum);
        out[x] = hl_u8_sat_u16((uint16_t)((uint16_t)(gx + gy) >> shift));
    }
}

/* ----- median: sort each row of three, then combine ------------------------------ */

static inline uint8_t median_mid(uint8_t a, uint8_t b, uint8_t c) { return hl_max_u8(hl_min_u8(hl_max_u8(a, b), c), hl_min_u8(a, b)); }

/* A ring row holds max_x, min_x, mid_x (w bytes each) of the taps a, b, c
 * = in(x), in(x+1), in(x+2), taken one per pass (see the note above):
 * max(max(a, b), c), min(min(a, b), c) and mid(a, b, c) =
 * max(min(max(a, b), c), min(a, b)). */
static inline void median_h(const uint8_t *in, void *dst, int w) {
    uint8_t *max_x = dst, *min_x = max_x + w, *mid_x = min_x + w;
    for (int x = 0; x < w; x++)
        max_x[x] = min_x[x] = in[x];
    for (int x = 0; x < w; x++) {
        uint8_t a = max_x[x], b = in[x + 1];
        max_x[x] = hl_max_u8(a, b);
        min_x[x] = hl_min_u8(a, b);
    }
    for (int x = 0; x < w; x++) {
        uint8_t hi = max_x[x], lo = min_x[x], c = in[x + 2];
        mid_x[x] = hl_max_u8(hl_min_u8(hi, c), lo);
        max_x[x] = hl_max_u8(hi, c);
        min_x[x] = hl_min_u8(lo, c);
    }
}

static inline void median_v(const void *const *rows, uint8_t *out, int w) {
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
    for (int x = 0; x < w; x++) {
        uint8_t min_of_max = hl_min_u8(hl_min_u8(r0[x], r1[x]), r2[x]);
        uint8_t max_of_min = hl_max_u8(hl_max_u8(r0[w + x], r1[w + x]), r2[w + x]);
        uint8_t mid_of_mid = median_mid(r0[2 * w + x], r1[2 * w + x], r2[2 * w + x]);
        out[x] = median_mid(min_of_max, max_of_min, mid_of_mid);
    }
}

/* ----- the driver ------------------------------------------------------------------- */

enum stencil_kind { BOX_BLUR, DILATE, GAUSSIAN, SOBEL, MEDIAN };

/* Bytes per output column of a ring row. */
static inline size_t stencil_ring_bytes(enum stencil_kind kind) {
    switch (kind) {
    case BOX_BLUR:
    case GAUSSIAN:
        return sizeof(uint16_t);
    case SOBEL:
        return sizeof(uint16_t) + sizeof(int16_t);
    case MEDIAN:
        return 3 * sizeof(uint8_t);
    default:
        return sizeof(uint8_t);
    }
}

/* One pass of the stencil `kind`: without rows, the horizontal pass of input
 * row `in` into ring row `dst`; with rows, the vertical pass into output row
 * `out`. */
static inline void stencil_pass(enum stencil_kind kind, const uint8_t *in, void *dst, const void *const *rows, uint8_t *out, int w, int k) {
    const int horizontal = rows == NULL;
    switch (kind) {
    case BOX_BLUR: horizontal ? box_blur_h(in, dst, w, k) : box_blur_v(rows, out, w, k); break;
    case DILATE: horizontal ? dilate_h(in, dst, w, k) : dilate_v(rows, out, w, k); break;
    case GAUSSIAN: horizontal ? gaussian_h(in, dst, w, k) : gaussian_v(rows, out, w, k); break;
    case SOBEL: horizontal ? sobel_h(in, dst, w, k) : sobel_v(rows, out, w, k); break;
    case MEDIAN: horizontal ? median_h(in, dst, w) : median_v(rows, out, w); break;
    }
}

/* Runs the k x k stencil `kind` (k = 3 for MEDIAN). Returns 0, or
 * halide_error_code_out_of_memory. */
static inline int stencil_separable(struct halide_buffer_t *input, struct halide_buffer_t *output, enum stencil_kind kind, int k) {
    const int w = output->dim[0].extent, h = output->dim[1].extent;
    const int in_stride = input->dim[1].stride, out_stride = output->dim[1].stride;
    const uint8_t *in = input->host;
    uint8_t *out = output->host;
    const size_t row_bytes = stencil_ring_bytes(kind) * (size_t)w;
    unsigned char *ring = malloc(row_bytes * (size_t)k);
    if (!ring)
        return halide_error_code_out_of_memory;
    for (int r = 0; r < h + k - 1; r++) {
        stencil_pass(kind, in + (size_t)r * in_stride, ring + (size_t)(r % k) * row_bytes, NULL, NULL, w, k);
        if (r < k - 1)
            continue;
        const int y = r - (k - 1);
        const void *rows[STENCIL_MAX_K];
        for (int j = 0; j < k; j++)
            rows[j] = ring + (size_t)((y + j) % k) * row_bytes;
        stencil_pass(kind, NULL, NULL, rows, out + (size_t)y * out_stride, w, k);
    }
    free(ring);
    return 0;
}

#endif
