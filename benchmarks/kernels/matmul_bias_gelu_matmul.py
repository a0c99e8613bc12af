"""matmul_bias_gelu_matmul: two chained int16 matmuls (256x256x256 each)
with a bias and GELU between them.

hidden = gelu_q8(sat_i16(round((a*b + bias) >> 8))), a Q8 int16 matrix;
out = hidden * c, the int32 (Q16) accumulator. The 4 hidden rows a row of
output tiles needs are computed per row of tiles (compute_at), each matmul
register-blocked in 64x4 tiles.
"""

from _nn import matmul_fused


def build():
    return matmul_fused("gelu", second_matmul=True)
