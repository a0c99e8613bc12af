/* gaussian3x3: 3x3 Gaussian blur, weights [1 2 1] both ways, rounding shift by 4 (uint16).
 * Scalar C baseline of benchmarks/kernels/gaussian3x3.py (_stencil.gaussian(3)); see stencil.h. */
#include "stencil.h"

int scalar_gaussian3x3(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, GAUSSIAN, 3); }
