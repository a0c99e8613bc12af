/* sobel5x5: 5x5 Sobel edge magnitude (|gx| + |gy|) >> 4, saturated to uint8.
 * Scalar C baseline of benchmarks/kernels/sobel5x5.py (_stencil.sobel(5)); see stencil.h. */
#include "stencil.h"

int scalar_sobel5x5(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, SOBEL, 5); }
