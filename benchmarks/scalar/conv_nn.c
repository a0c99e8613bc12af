/* conv_nn: quantized 3x3 convolution layer, 64 -> 64 channels (TFLite-style).
 * Scalar C baseline of benchmarks/kernels/conv_nn.py: HWC uint8 input
 * (channels innermost), int8 filter(co, ci, fx, fy), int32 bias:
 *   acc(co, x, y) = bias(co) + sum_{fy,fx,ci} (input(ci, x+fx, y+fy) - input_zero) * filter(co, ci, fx, fy)
 * (int16 x int16 -> int32, wrapping sum), then requantize_u8. The output
 * channels are the inner loop, so the filter is read contiguously. */
#include "halide_ops.h"

/* The int32 accumulators of one output pixel, all output channels. */
static void conv_pixel(const uint8_t *restrict in, int is1, int is2, int ci_n, uint8_t zero, const int8_t *restrict filt, int fs1,
                       int fs2, int fs3, const int32_t *restrict bias, int co_n, uint32_t *restrict acc) {
    for (int co = 0; co < co_n; co++)
        acc[co] = (uint32_t)bias[co];
    for (int fy = 0; fy < 3; fy++)
        for (int fx = 0; fx < 3; fx++)
            for (int ci = 0; ci < ci_n; ci++) {
                const int16_t v = (int16_t)(in[ci + fx * is1 + fy * is2] - zero);
                const int8_t *f = filt + (size_t)ci * fs1 + (size_t)fx * fs2 + (size_t)fy * fs3;
                for (int co = 0; co < co_n; co++)
                    acc[co] += (uint32_t)(v * f[co]);
            }
}

int scalar_conv_nn(struct halide_buffer_t *input, uint8_t input_zero, struct halide_buffer_t *filter, struct halide_buffer_t *bias,
                   int32_t output_multiplier, int32_t output_shift, uint8_t output_zero, uint8_t output_min, uint8_t output_max,
                   struct halide_buffer_t *output) {
    const int co_n = output->dim[0].extent, w = output->dim[1].extent, h = output->dim[2].extent;
    uint32_t *acc = malloc(sizeof *acc * (size_t)co_n);
    if (!acc)
        return halide_error_code_out_of_memory;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *in = input->host + (size_t)x * input->dim[1].stride + (size_t)y * input->dim[2].stride;
            conv_pixel(in, input->dim[1].stride, input->dim[2].stride, input->dim[0].extent, input_zero, (const int8_t *)filter->host,
                       filter->dim[1].stride, filter->dim[2].stride, filter->dim[3].stride, (const int32_t *)bias->host, co_n, acc);
            uint8_t *o = output->host + (size_t)x * output->dim[1].stride + (size_t)y * output->dim[2].stride;
            for (int co = 0; co < co_n; co++)
                o[co] = hl_requantize_u8((int32_t)acc[co], output_multiplier, output_shift, output_zero, output_min, output_max);
        }
    free(acc);
    return 0;
}
