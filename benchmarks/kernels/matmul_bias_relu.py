"""matmul_bias_relu: int16 matmul (256x256x256, Q8 operands, Q16 int32 accumulator) +
int32 bias per output column, then ReLU; int32 out.

Same register-blocked schedule as matmul_b*, the epilogue applied to each
64x4 tile as it is stored.
"""

from _nn import matmul_fused


def build():
    return matmul_fused("relu")
