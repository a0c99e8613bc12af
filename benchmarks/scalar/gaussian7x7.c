/* gaussian7x7: 7x7 Gaussian blur, weights [1 6 15 20 15 6 1] both ways, rounding shift by 12 (uint32 vertical pass).
 * Scalar C baseline of benchmarks/kernels/gaussian7x7.py (_stencil.gaussian(7)); see stencil.h. */
#include "stencil.h"

int scalar_gaussian7x7(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, GAUSSIAN, 7); }
