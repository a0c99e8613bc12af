/* The GCC 12.2 miscompile behind this case, without misaal: the shape of
   the lane loop misaal emits for select(u16(a) > 0, i16(b), 0) on 2 lanes.
     cc -O0 gcc12_repro.c && ./a.out          -> 28923 (want 28923)
     cc -O2 -mavx2 gcc12_repro.c && ./a.out   -> 0 with Debian 12's GCC 12.2
     clang-19 -O3 -march=native, or -fno-tree-loop-vectorize: 28923 */
#include <stdint.h>
#include <stdio.h>
__attribute__((noinline)) void f(const uint32_t *a, const uint32_t *b, int16_t *out) {
  for (int64_t i = 0; i < 8; i++) {
    int16_t v[2];
    for (int l = 0; l < 2; l++) v[l] = ((uint8_t)(((uint16_t)0) < ((uint16_t)a[2 * i + l]))) ? ((int16_t)b[2 * i + l]) : ((int16_t)0);
    for (int l = 0; l < 2; l++) out[2 * i + l] = v[l];
  }
}
int main(void) {
  uint32_t a[16], b[16]; int16_t o[16];
  for (int i = 0; i < 16; i++) { a[i] = 0; b[i] = 0x11110000u + i; }
  a[12] = 0xa6aa0c80u; b[12] = 0x7f5570fbu;
  f(a, b, o);
  printf("%d (want %d)\n", o[12], (int16_t)0x70fb);
  return 0;
}
