/* depthwise_conv: quantized 3x3 depthwise convolution, 64 channels
 * (TFLite-style, depth multiplier 1).
 * Scalar C baseline of benchmarks/kernels/depthwise_conv.py: HWC uint8 input
 * (channels innermost), int8 filter(c, fx, fy), int32 bias:
 *   acc(c, x, y) = bias(c) + sum_{fy,fx} (input(c, x+fx, y+fy) - input_zero) * filter(c, fx, fy)
 * (int16 x int16 -> int32, wrapping sum), then requantize_u8. Channels are
 * the inner loop. */
#include "halide_ops.h"

/* One output pixel, all channels: `in` is the window's first tap. */
static void depthwise_pixel(const uint8_t *restrict in, int is1, int is2, uint8_t zero, const int8_t *restrict filt, int fs1, int fs2,
                            const int32_t *restrict bias, int channels, int32_t mult, int32_t shift, uint8_t out_zero, uint8_t lo,
                            uint8_t hi, uint8_t *restrict out) {
    for (int c = 0; c < channels; c++) {
        uint32_t acc = (uint32_t)bias[c];
        for (int fy = 0; fy < 3; fy++)
            for (int fx = 0; fx < 3; fx++)
                acc += (uint32_t)((int16_t)(in[c + fx * is1 + fy * is2] - zero) * filt[c + fx * fs1 + fy * fs2]);
        out[c] = hl_requantize_u8((int32_t)acc, mult, shift, out_zero, lo, hi);
    }
}

int scalar_depthwise_conv(struct halide_buffer_t *input, uint8_t input_zero, struct halide_buffer_t *filter, struct halide_buffer_t *bias,
                          int32_t output_multiplier, int32_t output_shift, uint8_t output_zero, uint8_t output_min,
                          uint8_t output_max, struct halide_buffer_t *output) {
    const int channels = output->dim[0].extent, w = output->dim[1].extent, h = output->dim[2].extent;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            depthwise_pixel(input->host + (size_t)x * input->dim[1].stride + (size_t)y * input->dim[2].stride, input->dim[1].stride,
                            input->dim[2].stride, input_zero, (const int8_t *)filter->host, filter->dim[1].stride,
                            filter->dim[2].stride, (const int32_t *)bias->host, channels, output_multiplier, output_shift,
                            output_zero, output_min, output_max,
                            output->host + (size_t)x * output->dim[1].stride + (size_t)y * output->dim[2].stride);
    return 0;
}
