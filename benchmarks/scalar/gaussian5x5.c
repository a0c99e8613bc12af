/* gaussian5x5: 5x5 Gaussian blur, weights [1 4 6 4 1] both ways, rounding shift by 8 (uint16).
 * Scalar C baseline of benchmarks/kernels/gaussian5x5.py (_stencil.gaussian(5)); see stencil.h. */
#include "stencil.h"

int scalar_gaussian5x5(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, GAUSSIAN, 5); }
