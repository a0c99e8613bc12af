"""average_pool: 3x3 stride-2 average pooling of a uint8 HWC tensor
(64 channels innermost, 513x513 -> 256x256). The average is the uint16 sum
of the 9 taps divided by 9 with rounding, clamped to [output_min,
output_max] (the activation range).
"""

from _nn import pool


def build():
    return pool("average", False)
