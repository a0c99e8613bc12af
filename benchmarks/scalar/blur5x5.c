/* blur5x5: 5x5 box blur, the rounded mean of the window (uint16 sums, (sum + 12) / 25).
 * Scalar C baseline of benchmarks/kernels/blur5x5.py (_stencil.box_blur(5)); see stencil.h. */
#include "stencil.h"

int scalar_blur5x5(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, BOX_BLUR, 5); }
