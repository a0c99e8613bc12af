/* dilate5x5: grey-scale dilation, the maximum over a 5x5 window.
 * Scalar C baseline of benchmarks/kernels/dilate5x5.py (_stencil.dilate(5)); see stencil.h. */
#include "stencil.h"

int scalar_dilate5x5(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, DILATE, 5); }
