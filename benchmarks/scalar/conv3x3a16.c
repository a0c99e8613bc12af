/* conv3x3a16: 3x3 convolution of a uint8 image with an int8 mask, in
 * wrapping int16 arithmetic (Halide's Hexagon benchmark).
 * Scalar C baseline of benchmarks/kernels/conv3x3a16.py:
 *   out = u8(clamp(sum_{j,i} i16(input(x+i, y+j)) * i16(mask(i, j)) >> 4, 0, 255)).
 * The sum is formed in int (it cannot overflow there) and wrapped to int16
 * once, which is the int16 wrapping sum. */
#include "halide_ops.h"

int scalar_conv3x3a16(struct halide_buffer_t *input, struct halide_buffer_t *mask, struct halide_buffer_t *output) {
    const int w = output->dim[0].extent, h = output->dim[1].extent;
    const int in_stride = input->dim[1].stride, out_stride = output->dim[1].stride;
    const uint8_t *in = input->host;
    uint8_t *out = output->host;
    int16_t m[3][3];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            m[j][i] = ((const int8_t *)mask->host)[i + j * mask->dim[1].stride];
    for (int y = 0; y < h; y++) {
        uint8_t *o = out + (size_t)y * out_stride;
        for (int x = 0; x < w; x++) {
            int acc = 0;
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    acc += in[(size_t)(y + j) * in_stride + x + i] * m[j][i];
            int16_t s = (int16_t)((int16_t)acc >> 4);
            o[x] = (uint8_t)hl_clamp_i16(s, 0, 255);
        }
    }
    return 0;
}
