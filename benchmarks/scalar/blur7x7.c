/* blur7x7: 7x7 box blur, the rounded mean of the window (uint16 sums, (sum + 24) / 49).
 * Scalar C baseline of benchmarks/kernels/blur7x7.py (_stencil.box_blur(7)); see stencil.h. */
#include "stencil.h"

int scalar_blur7x7(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, BOX_BLUR, 7); }
