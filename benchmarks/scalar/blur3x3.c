/* blur3x3: 3x3 box blur, the rounded mean of the window (uint16 sums, (sum + 4) / 9).
 * Scalar C baseline of benchmarks/kernels/blur3x3.py (_stencil.box_blur(3)); see stencil.h. */
#include "stencil.h"

int scalar_blur3x3(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, BOX_BLUR, 3); }
