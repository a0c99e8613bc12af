/* AVX-512 intrinsics that misaal's C uses and SIMDe (Debian's 0.7.4, and
 * 0.8.2) does not provide, written for the bench's SIMDe mode only: each is
 * the same computation on SIMDe's 128/256-bit intrinsics, one half at a
 * time. Hand-written test infrastructure, never a spec or a rule: it only
 * lets our compiled C run on a CPU without AVX-512, and
 * tests/bench_cli.rs checks every one of them bit for bit against the CPU's
 * own instruction where the CPU has AVX-512. Force-included after
 * <simde/x86/avx512.h>; a SIMDe that has the intrinsic keeps its own. */
#ifndef MISAAL_SIMDE_GAPS_H
#define MISAAL_SIMDE_GAPS_H
#include <simde/x86/avx512.h>
#include <stdint.h>
#include <string.h>

static inline simde__m512i misaal_join256(simde__m256i lo, simde__m256i hi) {
    return simde_mm512_inserti64x4(simde_mm512_castsi256_si512(lo), hi, 1);
}

/* A two-operand 512-bit op as the 256-bit op F on the low halves and on the
 * high halves of both operands. */
#define MISAAL_BY_HALVES2(f, a, b) \
    misaal_join256(f(simde_mm512_castsi512_si256(a), simde_mm512_castsi512_si256(b)), \
                   f(simde_mm512_extracti64x4_epi64(a, 1), simde_mm512_extracti64x4_epi64(b, 1)))

#ifndef _mm512_cvtepu8_epi16
static inline simde__m512i misaal_mm512_cvtepu8_epi16(simde__m256i a) {
    return misaal_join256(simde_mm256_cvtepu8_epi16(simde_mm256_castsi256_si128(a)), simde_mm256_cvtepu8_epi16(simde_mm256_extracti128_si256(a, 1)));
}
#define _mm512_cvtepu8_epi16(a) misaal_mm512_cvtepu8_epi16(a)
#endif

#ifndef _mm512_cvtepi8_epi32
static inline simde__m512i misaal_mm512_cvtepi8_epi32(simde__m128i a) {
    return misaal_join256(simde_mm256_cvtepi8_epi32(a), simde_mm256_cvtepi8_epi32(simde_mm_unpackhi_epi64(a, a)));
}
#define _mm512_cvtepi8_epi32(a) misaal_mm512_cvtepi8_epi32(a)
#endif

#ifndef _mm512_cvtepi16_epi32
static inline simde__m512i misaal_mm512_cvtepi16_epi32(simde__m256i a) {
    return misaal_join256(simde_mm256_cvtepi16_epi32(simde_mm256_castsi256_si128(a)), simde_mm256_cvtepi16_epi32(simde_mm256_extracti128_si256(a, 1)));
}
#define _mm512_cvtepi16_epi32(a) misaal_mm512_cvtepi16_epi32(a)
#endif

#ifndef _mm512_cvtepu16_epi32
static inline simde__m512i misaal_mm512_cvtepu16_epi32(simde__m256i a) {
    return misaal_join256(simde_mm256_cvtepu16_epi32(simde_mm256_castsi256_si128(a)), simde_mm256_cvtepu16_epi32(simde_mm256_extracti128_si256(a, 1)));
}
#define _mm512_cvtepu16_epi32(a) misaal_mm512_cvtepu16_epi32(a)
#endif

#ifndef _mm512_srai_epi32
static inline simde__m512i misaal_mm512_srai_epi32(simde__m512i a, int imm) {
    return misaal_join256(simde_mm256_srai_epi32(simde_mm512_castsi512_si256(a), imm), simde_mm256_srai_epi32(simde_mm512_extracti64x4_epi64(a, 1), imm));
}
#define _mm512_srai_epi32(a, imm) misaal_mm512_srai_epi32(a, imm)
#endif

#ifndef _mm512_cvtusepi16_epi8
/* u16 -> u8 with unsigned saturation: each 16-lane half clamped to 255,
 * packed, and the pack's 64-bit lane order undone. */
static inline simde__m256i misaal_mm512_cvtusepi16_epi8(simde__m512i a) {
    simde__m256i max = simde_mm256_set1_epi16(255);
    simde__m256i lo = simde_mm256_min_epu16(simde_mm512_castsi512_si256(a), max);
    simde__m256i hi = simde_mm256_min_epu16(simde_mm512_extracti64x4_epi64(a, 1), max);
    return simde_mm256_permute4x64_epi64(simde_mm256_packus_epi16(lo, hi), 0xD8);
}
#define _mm512_cvtusepi16_epi8(a) misaal_mm512_cvtusepi16_epi8(a)
#endif

#ifndef _mm512_mulhi_epu16
static inline simde__m512i misaal_mm512_mulhi_epu16(simde__m512i a, simde__m512i b) {
    return MISAAL_BY_HALVES2(simde_mm256_mulhi_epu16, a, b);
}
#define _mm512_mulhi_epu16(a, b) misaal_mm512_mulhi_epu16(a, b)
#endif

#ifndef _mm512_cvtepi32_epi16
/* i32 -> i16 by truncation: each lane's low half (masked, so the unsigned
 * pack cannot saturate), packed, and the pack's 64-bit lane order undone. */
static inline simde__m256i misaal_mm512_cvtepi32_epi16(simde__m512i a) {
    simde__m256i low = simde_mm256_set1_epi32(0xFFFF);
    simde__m256i lo = simde_mm256_and_si256(simde_mm512_castsi512_si256(a), low);
    simde__m256i hi = simde_mm256_and_si256(simde_mm512_extracti64x4_epi64(a, 1), low);
    return simde_mm256_permute4x64_epi64(simde_mm256_packus_epi32(lo, hi), 0xD8);
}
#define _mm512_cvtepi32_epi16(a) misaal_mm512_cvtepi32_epi16(a)
#endif

/* SIMDe 0.7.4 has simde_mm512_madd_epi16, but its native alias takes the
 * masked form's four operands; the two-operand alias, as a fixed SIMDe has it. */
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16(a, b)

#ifndef _mm512_cvtepi32_epi64
static inline simde__m512i misaal_mm512_cvtepi32_epi64(simde__m256i a) {
    return misaal_join256(simde_mm256_cvtepi32_epi64(simde_mm256_castsi256_si128(a)), simde_mm256_cvtepi32_epi64(simde_mm256_extracti128_si256(a, 1)));
}
#define _mm512_cvtepi32_epi64(a) misaal_mm512_cvtepi32_epi64(a)
#endif

/* Arithmetic shift of 64-bit lanes: the logical shift, with the sign
 * copied into the vacated bits; a count over 63 leaves the sign. */
static inline simde__m256i misaal_srai64_256(simde__m256i a, unsigned imm) {
    simde__m256i sign = simde_mm256_cmpgt_epi64(simde_mm256_setzero_si256(), a);
    if (imm > 63) return sign;
    if (imm == 0) return a;
    return simde_mm256_or_si256(simde_mm256_srli_epi64(a, (int) imm), simde_mm256_slli_epi64(sign, (int) (64 - imm)));
}

#ifndef _mm512_srai_epi64
static inline simde__m512i misaal_mm512_srai_epi64(simde__m512i a, unsigned imm) {
    return misaal_join256(misaal_srai64_256(simde_mm512_castsi512_si256(a), imm), misaal_srai64_256(simde_mm512_extracti64x4_epi64(a, 1), imm));
}
#define _mm512_srai_epi64(a, imm) misaal_mm512_srai_epi64(a, imm)
#endif

/* Per-lane arithmetic shift of 64-bit lanes (vpsravq; AVX2 has none): the
 * logical shift, with the sign shifted into the vacated bits; a count over
 * 63 (unsigned) leaves the sign. */
static inline simde__m256i misaal_srav64_256(simde__m256i a, simde__m256i count) {
    simde__m256i sign = simde_mm256_cmpgt_epi64(simde_mm256_setzero_si256(), a);
    simde__m256i fill = simde_mm256_sllv_epi64(sign, simde_mm256_sub_epi64(simde_mm256_set1_epi64x(64), count));
    simde__m256i r = simde_mm256_or_si256(simde_mm256_srlv_epi64(a, count), fill);
    simde__m256i in_range = simde_mm256_cmpeq_epi64(simde_mm256_and_si256(count, simde_mm256_set1_epi64x(-64)), simde_mm256_setzero_si256());
    return simde_mm256_blendv_epi8(sign, r, in_range);
}

#ifndef _mm512_srav_epi64
static inline simde__m512i misaal_mm512_srav_epi64(simde__m512i a, simde__m512i count) {
    return MISAAL_BY_HALVES2(misaal_srav64_256, a, count);
}
#define _mm512_srav_epi64(a, count) misaal_mm512_srav_epi64(a, count)
#endif

#ifndef _mm256_srav_epi64
#define _mm256_srav_epi64(a, count) misaal_srav64_256(a, count)
#endif

/* Per-lane arithmetic shift of 32-bit lanes; a count over 31 (unsigned)
 * leaves the sign, as AVX2's vpsravd does. */
#ifndef _mm512_srav_epi32
static inline simde__m512i misaal_mm512_srav_epi32(simde__m512i a, simde__m512i count) {
    return MISAAL_BY_HALVES2(simde_mm256_srav_epi32, a, count);
}
#define _mm512_srav_epi32(a, count) misaal_mm512_srav_epi32(a, count)
#endif

/* Signed 16-bit compare into a mask register. */
#ifndef _mm512_cmpgt_epi16_mask
static inline simde__mmask32 misaal_mm512_cmpgt_epi16_mask(simde__m512i a, simde__m512i b) {
    simde__m256i lo = simde_mm256_cmpgt_epi16(simde_mm512_castsi512_si256(a), simde_mm512_castsi512_si256(b));
    simde__m256i hi = simde_mm256_cmpgt_epi16(simde_mm512_extracti64x4_epi64(a, 1), simde_mm512_extracti64x4_epi64(b, 1));
    return simde_mm512_movepi16_mask(misaal_join256(lo, hi));
}
#define _mm512_cmpgt_epi16_mask(a, b) misaal_mm512_cmpgt_epi16_mask(a, b)
#endif

#ifndef _mm256_srai_epi64
#define _mm256_srai_epi64(a, imm) misaal_srai64_256(a, imm)
#endif

/* AVX-512VL's 256-bit narrowings (a doubled narrow vector's last step):
 * each 128-bit half narrowed in lane order by a 128-bit pack, the lanes
 * first masked (truncation) or clamped (unsigned saturation) so that the
 * pack's own saturation never acts. */
#ifndef _mm256_cvtepi32_epi16
static inline simde__m128i misaal_mm256_cvtepi32_epi16(simde__m256i a) {
    simde__m128i low = simde_mm_set1_epi32(0xFFFF);
    return simde_mm_packus_epi32(simde_mm_and_si128(simde_mm256_castsi256_si128(a), low), simde_mm_and_si128(simde_mm256_extracti128_si256(a, 1), low));
}
#define _mm256_cvtepi32_epi16(a) misaal_mm256_cvtepi32_epi16(a)
#endif

#ifndef _mm256_cvtepi16_epi8
static inline simde__m128i misaal_mm256_cvtepi16_epi8(simde__m256i a) {
    simde__m128i low = simde_mm_set1_epi16(0xFF);
    return simde_mm_packus_epi16(simde_mm_and_si128(simde_mm256_castsi256_si128(a), low), simde_mm_and_si128(simde_mm256_extracti128_si256(a, 1), low));
}
#define _mm256_cvtepi16_epi8(a) misaal_mm256_cvtepi16_epi8(a)
#endif

#ifndef _mm256_cvtusepi16_epi8
static inline simde__m128i misaal_mm256_cvtusepi16_epi8(simde__m256i a) {
    simde__m128i max = simde_mm_set1_epi16(255);
    return simde_mm_packus_epi16(simde_mm_min_epu16(simde_mm256_castsi256_si128(a), max), simde_mm_min_epu16(simde_mm256_extracti128_si256(a, 1), max));
}
#define _mm256_cvtusepi16_epi8(a) misaal_mm256_cvtusepi16_epi8(a)
#endif

#ifndef _mm_srav_epi16
/* i16 >> per-lane count (AVX-512BW/VL vpsravw at 128 bits): sign-extended
 * to 32 bits, where vpsravd also fills with the sign for any count over
 * 31, shifted, and packed back (every result fits 16 bits, so the signed
 * pack never saturates). */
static inline simde__m128i misaal_mm_srav_epi16(simde__m128i a, simde__m128i count) {
    simde__m256i r = simde_mm256_srav_epi32(simde_mm256_cvtepi16_epi32(a), simde_mm256_cvtepu16_epi32(count));
    return simde_mm_packs_epi32(simde_mm256_castsi256_si128(r), simde_mm256_extracti128_si256(r, 1));
}
#define _mm_srav_epi16(a, count) misaal_mm_srav_epi16(a, count)
#endif

#ifndef _mm256_srav_epi16
/* vpsravw at 256 bits: each 128-bit half as _mm_srav_epi16 above. */
static inline simde__m256i misaal_mm256_srav_epi16(simde__m256i a, simde__m256i count) {
    simde__m128i lo = misaal_mm_srav_epi16(simde_mm256_castsi256_si128(a), simde_mm256_castsi256_si128(count));
    simde__m128i hi = misaal_mm_srav_epi16(simde_mm256_extracti128_si256(a, 1), simde_mm256_extracti128_si256(count, 1));
    return simde_mm256_inserti128_si256(simde_mm256_castsi128_si256(lo), hi, 1);
}
#define _mm256_srav_epi16(a, count) misaal_mm256_srav_epi16(a, count)
#endif

#ifndef _mm512_cvtepu32_epi64
static inline simde__m512i misaal_mm512_cvtepu32_epi64(simde__m256i a) {
    return misaal_join256(simde_mm256_cvtepu32_epi64(simde_mm256_castsi256_si128(a)), simde_mm256_cvtepu32_epi64(simde_mm256_extracti128_si256(a, 1)));
}
#define _mm512_cvtepu32_epi64(a) misaal_mm512_cvtepu32_epi64(a)
#endif

/* Unsigned saturating narrowing, lane by lane: n little-endian lanes of
 * `from` bytes at `in`, each clamped to the largest `to`-byte value. */
static inline void misaal_usat_narrow(const void *in, void *out, int n, int from, int to) {
    uint64_t max = to == 8 ? ~0ull : (1ull << (8 * to)) - 1;
    for (int i = 0; i < n; i++) {
        uint64_t v = 0;
        memcpy(&v, (const char *)in + i * from, (size_t)from);
        v = v > max ? max : v;
        memcpy((char *)out + i * to, &v, (size_t)to);
    }
}

#ifndef _mm512_cvtusepi32_epi16
/* u32 -> u16 with unsigned saturation (vpmovusdw). */
static inline simde__m256i misaal_mm512_cvtusepi32_epi16(simde__m512i a) {
    uint32_t in[16];
    uint16_t res[16];
    simde_mm512_storeu_si512(in, a);
    misaal_usat_narrow(in, res, 16, 4, 2);
    return simde_mm256_loadu_si256(res);
}
#define _mm512_cvtusepi32_epi16(a) misaal_mm512_cvtusepi32_epi16(a)
#endif

#ifndef _mm512_cvtusepi64_epi32
/* u64 -> u32 with unsigned saturation (vpmovusqd). */
static inline simde__m256i misaal_mm512_cvtusepi64_epi32(simde__m512i a) {
    uint64_t in[8];
    uint32_t res[8];
    simde_mm512_storeu_si512(in, a);
    misaal_usat_narrow(in, res, 8, 8, 4);
    return simde_mm256_loadu_si256(res);
}
#define _mm512_cvtusepi64_epi32(a) misaal_mm512_cvtusepi64_epi32(a)
#endif

#ifndef _mm256_cvtusepi32_epi16
/* u32 -> u16 with unsigned saturation (vpmovusdw at 256 bits). */
static inline simde__m128i misaal_mm256_cvtusepi32_epi16(simde__m256i a) {
    uint32_t in[8];
    uint16_t res[8];
    simde_mm256_storeu_si256(in, a);
    misaal_usat_narrow(in, res, 8, 4, 2);
    return simde_mm_loadu_si128(res);
}
#define _mm256_cvtusepi32_epi16(a) misaal_mm256_cvtusepi32_epi16(a)
#endif

/* vpsllvw / vpsrlvw at 128 and 256 bits (AVX-512BW/VL): zero-extended to
 * 32 bits, where vpsllvd/vpsrlvd also give 0 for any count over 31,
 * shifted, masked to 16 bits and packed back (no lane saturates). */
static inline simde__m128i misaal_shv_epi16(simde__m128i a, simde__m128i count, int left) {
    simde__m256i x = simde_mm256_cvtepu16_epi32(a), c = simde_mm256_cvtepu16_epi32(count);
    simde__m256i r = simde_mm256_and_si256(left ? simde_mm256_sllv_epi32(x, c) : simde_mm256_srlv_epi32(x, c), simde_mm256_set1_epi32(0xFFFF));
    return simde_mm_packus_epi32(simde_mm256_castsi256_si128(r), simde_mm256_extracti128_si256(r, 1));
}
static inline simde__m256i misaal_shv256_epi16(simde__m256i a, simde__m256i count, int left) {
    simde__m128i lo = misaal_shv_epi16(simde_mm256_castsi256_si128(a), simde_mm256_castsi256_si128(count), left);
    simde__m128i hi = misaal_shv_epi16(simde_mm256_extracti128_si256(a, 1), simde_mm256_extracti128_si256(count, 1), left);
    return simde_mm256_inserti128_si256(simde_mm256_castsi128_si256(lo), hi, 1);
}
#ifndef _mm_sllv_epi16
#define _mm_sllv_epi16(a, count) misaal_shv_epi16(a, count, 1)
#endif
#ifndef _mm_srlv_epi16
#define _mm_srlv_epi16(a, count) misaal_shv_epi16(a, count, 0)
#endif
#ifndef _mm256_sllv_epi16
#define _mm256_sllv_epi16(a, count) misaal_shv256_epi16(a, count, 1)
#endif
#ifndef _mm256_srlv_epi16
#define _mm256_srlv_epi16(a, count) misaal_shv256_epi16(a, count, 0)
#endif

/* The 64-bit-lane ops of AVX-512DQ/VL at 256 bits that 32-bit division and
 * saturating casts reach (vpmullq, vpmovqd, vpmovsqd, vpmovusqd), lane by
 * lane. */
#ifndef _mm256_mullo_epi64
static inline simde__m256i misaal_mm256_mullo_epi64(simde__m256i a, simde__m256i b) {
    uint64_t x[4], y[4];
    simde_mm256_storeu_si256(x, a);
    simde_mm256_storeu_si256(y, b);
    for (int i = 0; i < 4; i++) x[i] *= y[i];
    return simde_mm256_loadu_si256(x);
}
#define _mm256_mullo_epi64(a, b) misaal_mm256_mullo_epi64(a, b)
#endif

/* i64 -> 32 bits, truncated (0), with signed (1) or unsigned (2) saturation. */
static inline simde__m128i misaal_narrow64_32(simde__m256i a, int kind) {
    int64_t in[4];
    uint32_t res[4];
    simde_mm256_storeu_si256(in, a);
    for (int i = 0; i < 4; i++) {
        int64_t v = in[i];
        if (kind == 1) v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
        res[i] = kind == 2 && (uint64_t)v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    return simde_mm_loadu_si128(res);
}
#ifndef _mm256_cvtepi64_epi32
#define _mm256_cvtepi64_epi32(a) misaal_narrow64_32(a, 0)
#endif
#ifndef _mm256_cvtsepi64_epi32
#define _mm256_cvtsepi64_epi32(a) misaal_narrow64_32(a, 1)
#endif
#ifndef _mm256_cvtusepi64_epi32
#define _mm256_cvtusepi64_epi32(a) misaal_narrow64_32(a, 2)
#endif

#ifndef _mm256_broadcast_i32x4
#define _mm256_broadcast_i32x4(a) simde_mm256_broadcastsi128_si256(a)
#endif

/* The same 128 bits in both halves, read as two 64-bit lanes (AVX512DQ/VL);
 * a random pipeline's broadcast of an i64x2 to i64x4. */
#ifndef _mm256_broadcast_i64x2
#define _mm256_broadcast_i64x2(a) simde_mm256_broadcastsi128_si256(a)
#endif

#endif
