/* dilate3x3: grey-scale dilation, the maximum over a 3x3 window.
 * Scalar C baseline of benchmarks/kernels/dilate3x3.py (_stencil.dilate(3)); see stencil.h. */
#include "stencil.h"

int scalar_dilate3x3(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, DILATE, 3); }
