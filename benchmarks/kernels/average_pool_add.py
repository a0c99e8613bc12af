"""average_pool_add: average_pool (3x3, stride 2, uint8 HWC, 64 channels,
513x513 -> 256x256, rounded uint16 sum / 9) fused with a saturating uint8
add of a second tensor of the output's shape, clamped to [output_min,
output_max].
"""

from _nn import pool


def build():
    return pool("average", True)
