"""matmul_bias_gelu: int16 matmul (256x256x256, Q8 operands, Q16 int32 accumulator) +
int32 bias per output column, then GELU in fixed point:
the sum is rounded to Q8 int16 and gelu_q8 (I-BERT's integer erf
approximation, see _common.py) gives the int16 Q8 output.

Same register-blocked schedule as matmul_b*, the epilogue applied to each
64x4 tile as it is stored.
"""

from _nn import matmul_fused


def build():
    return matmul_fused("gelu")
