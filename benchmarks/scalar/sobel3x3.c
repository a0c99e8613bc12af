/* sobel3x3: 3x3 Sobel edge magnitude |gx| + |gy|, saturated to uint8.
 * Scalar C baseline of benchmarks/kernels/sobel3x3.py (_stencil.sobel(3)); see stencil.h. */
#include "stencil.h"

int scalar_sobel3x3(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, SOBEL, 3); }
