/* median3x3: 3x3 median filter by a min/max sorting network.
 * Scalar C baseline of benchmarks/kernels/median3x3.py: each row of three is
 * sorted first (max_x, min_x, mid_x, the horizontal pass), then the median of
 * the nine is mid(min of the maxima, max of the minima, mid of the mids), with
 * mid(a, b, c) = max(min(max(a, b), c), min(a, b)). Exact. See stencil.h. */
#include "stencil.h"

int scalar_median3x3(struct halide_buffer_t *input, struct halide_buffer_t *output) { return stencil_separable(input, output, MEDIAN, 3); }
