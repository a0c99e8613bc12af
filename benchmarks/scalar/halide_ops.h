/* Halide's integer operations as plain C, for the scalar baselines in this
 * folder (see README.md). Each helper has exactly the semantics of the
 * Halide operation of the same name on the types in its name:
 *
 *   - casts to a narrower type wrap (Halide's u8(), i16(), ...), the `sat_`
 *     casts saturate (u8_sat, i16_sat, ...);
 *   - rounding_shift_right rounds to nearest, ties up, without overflow, and
 *     a negative amount shifts left (Halide's lowering:
 *     (a >> b) + ((b > 0) & (a >> (b - 1))));
 *   - rounding_mul_shift_right(a, b, q) = saturating_narrow(
 *     rounding_shift_right(widening_mul(a, b), q));
 *   - integer division and modulus floor (Euclidean), x / 0 is 0;
 *   - clamp(a, lo, hi) is max(min(a, hi), lo);
 *   - abs and absd of a signed type return the unsigned type of its width.
 *
 * Signed 32-bit sums that may overflow (matmul and convolution accumulators,
 * bias and residual adds) wrap in Halide's generated code; here they go
 * through uint32_t (hl_wrap_add_i32 or an uint32_t accumulator), so C's
 * undefined signed overflow never happens. Right shifts of negative signed
 * values are arithmetic (as in GCC and Clang).
 */
#ifndef MISAAL_SCALAR_HALIDE_OPS_H
#define MISAAL_SCALAR_HALIDE_OPS_H

#include <stdint.h>
#include <stdlib.h>
#include "HalideRuntime.h"

/* ----- saturating casts ---------------------------------------------------- */

static inline uint8_t hl_u8_sat_i16(int16_t a) { return (uint8_t)(a < 0 ? 0 : a > 255 ? 255 : a); }
static inline uint8_t hl_u8_sat_i32(int32_t a) { return (uint8_t)(a < 0 ? 0 : a > 255 ? 255 : a); }
static inline uint8_t hl_u8_sat_u16(uint16_t a) { return (uint8_t)(a > 255 ? 255 : a); }
static inline int8_t hl_i8_sat_i16(int16_t a) { return (int8_t)(a < -128 ? -128 : a > 127 ? 127 : a); }
static inline int16_t hl_i16_sat_i32(int32_t a) { return (int16_t)(a < -32768 ? -32768 : a > 32767 ? 32767 : a); }

/* ----- saturating and wrapping arithmetic ---------------------------------- */

static inline uint8_t hl_saturating_add_u8(uint8_t a, uint8_t b) {
    int s = a + b;
    return (uint8_t)(s > 255 ? 255 : s);
}

static inline int16_t hl_saturating_add_i16(int16_t a, int16_t b) {
    int32_t s = (int32_t)a + b;
    return (int16_t)(s < -32768 ? -32768 : s > 32767 ? 32767 : s);
}

/* int32 a + b, wrapping modulo 2^32 like Halide's generated code. */
static inline int32_t hl_wrap_add_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

/* ----- min / max / clamp --------------------------------------------------- */

static inline uint8_t hl_max_u8(uint8_t a, uint8_t b) { return a > b ? a : b; }
static inline uint8_t hl_min_u8(uint8_t a, uint8_t b) { return a < b ? a : b; }
static inline int32_t hl_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t hl_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline uint8_t hl_clamp_u8(uint8_t a, uint8_t lo, uint8_t hi) { return hl_max_u8(hl_min_u8(a, hi), lo); }
static inline int8_t hl_clamp_i8(int8_t a, int8_t lo, int8_t hi) {
    int8_t m = a < hi ? a : hi;
    return m > lo ? m : lo;
}
static inline int16_t hl_clamp_i16(int16_t a, int16_t lo, int16_t hi) {
    int16_t m = a < hi ? a : hi;
    return m > lo ? m : lo;
}

/* ----- abs / absd ----------------------------------------------------------- */

static inline uint16_t hl_abs_i16(int16_t a) { return (uint16_t)(a < 0 ? -(int32_t)a : a); }
static inline uint16_t hl_absd_u16(uint16_t a, uint16_t b) { return (uint16_t)(a > b ? a - b : b - a); }

/* ----- shifts --------------------------------------------------------------- */

/* Halide's a >> b and a << b for a signed amount: a negative amount shifts
 * the other way. Left shifts wrap. */
static inline int32_t hl_shl_i32(int32_t a, int32_t b) { return b >= 0 ? (int32_t)((uint32_t)a << b) : a >> -b; }
static inline int32_t hl_shr_i32(int32_t a, int32_t b) { return b >= 0 ? a >> b : (int32_t)((uint32_t)a << -b); }

/* rounding_shift_right: round(a / 2^b), ties up, never overflowing. */
static inline int32_t hl_rounding_shift_right_i32(int32_t a, int32_t b) {
    if (b > 0)
        return (a >> b) + ((a >> (b - 1)) & 1);
    return (int32_t)((uint32_t)a << -b);
}

static inline uint16_t hl_rounding_shift_right_u16(uint16_t a, int b) {
    if (b > 0)
        return (uint16_t)((a >> b) + ((a >> (b - 1)) & 1));
    return (uint16_t)(a << -b);
}

static inline uint32_t hl_rounding_shift_right_u32(uint32_t a, int b) {
    if (b > 0)
        return (a >> b) + ((a >> (b - 1)) & 1);
    return a << -b;
}

/* rounding_mul_shift_right(a, b, q) on int32: the 64-bit product rounded by
 * q bits, saturated to int32 (only a = b = INT32_MIN, q = 31 saturates). */
static inline int32_t hl_rounding_mul_shift_right_i32(int32_t a, int32_t b, int q) {
    int64_t p = (int64_t)a * b;
    int64_t r = q > 0 ? (p >> q) + ((p >> (q - 1)) & 1) : p;
    return (int32_t)(r < INT32_MIN ? INT32_MIN : r > INT32_MAX ? INT32_MAX : r);
}

/* ----- division ------------------------------------------------------------- */

/* Halide's int32 division: rounds towards negative infinity for a positive
 * divisor (Euclidean: the remainder is never negative); x / 0 = 0. */
static inline int32_t hl_div_i32(int32_t a, int32_t b) {
    if (b == 0)
        return 0;
    if (b == -1)
        return (int32_t)(0u - (uint32_t)a); /* INT32_MIN / -1 wraps */
    int32_t q = a / b, r = a % b;
    if (r < 0)
        q = b > 0 ? q - 1 : q + 1;
    return q;
}

/* count_leading_zeros of an int32 (32 for 0). */
static inline int32_t hl_count_leading_zeros_i32(int32_t a) { return a == 0 ? 32 : __builtin_clz((uint32_t)a); }

/* ----- fixed-point building blocks of benchmarks/kernels/_common.py -------- */

/* requantize_u8: int32 accumulator -> uint8, the quantized-NN epilogue. */
static inline uint8_t hl_requantize_u8(int32_t acc, int32_t multiplier, int32_t shift, uint8_t zero, uint8_t lo, uint8_t hi) {
    int32_t scaled = hl_rounding_mul_shift_right_i32(acc, multiplier, 31);
    int16_t s16 = hl_i16_sat_i32(hl_rounding_shift_right_i32(scaled, shift));
    return hl_clamp_u8(hl_u8_sat_i16(hl_saturating_add_i16(s16, (int16_t)zero)), lo, hi);
}

/* gelu_q8: I-BERT's integer GELU of an int16 Q8 value, int16 Q8 result. */
static inline int16_t hl_gelu_q8(int16_t x) {
    int32_t a = hl_abs_i16(x);                       /* i32(abs(x)), abs is uint16 */
    int32_t u = hl_min_i32((a * 181) >> 8, 453);
    int32_t d = 453 - u;
    int32_t erf_abs = 16384 - ((d * d * 4732) >> 16);
    int32_t erf = x < 0 ? -erf_abs : erf_abs;
    return (int16_t)(((int32_t)x * (16384 + erf)) >> 15); /* wrapping i16() */
}

#endif
