"""qwix 0.1.8's Pallas kernels, called as a test would."""
import jax.numpy as jnp
from qwix.contrib.kernels import lhs_fused_quantized_matmul, quantized_matmul


def test_quantized_matmul():
  x = jnp.ones((256, 512), jnp.int8)
  sx = jnp.ones((256, 1), jnp.float32)
  y = jnp.ones((512, 256), jnp.int8)
  sy = jnp.ones((1, 256), jnp.float32)
  quantized_matmul.quantized_matmul(x, sx, y, sy, bm=128, bk=256, bn=128, dtype=jnp.float32)


def test_lhs_fused_quantized_matmul():
  y = jnp.ones((512, 256), jnp.int8)
  sy = jnp.ones((1, 256), jnp.float32)
  lhs_fused_quantized_matmul.lhs_fused_quantized_matmul(jnp.ones((256, 512), jnp.bfloat16), y, sy, bm=128, bk=256,
                                                        bn=128, sm=128)
