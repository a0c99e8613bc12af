"""max_pool: 3x3 stride-2 max pooling of a uint8 HWC tensor (64 channels
innermost, 513x513 -> 256x256), clamped to [output_min, output_max] (the
activation range).
"""

from _nn import pool


def build():
    return pool("max", False)
