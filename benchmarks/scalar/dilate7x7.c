/* dilate7x7: grey-scale dilation, the maximum over a 7x7 window.
 * Scalar C baseline of benchmarks/kernels/dilate7x7.py (_stencil.dilate(7)); see stencil.h. */
#include "stencil.h"

int scalar_dilate7x7(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, DILATE, 7); }
