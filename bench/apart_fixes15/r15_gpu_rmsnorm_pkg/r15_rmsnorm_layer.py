"""RMSNorm layer in the Flax module style (setup / __call__), backed by the fused kernel.

The statistic `rsqrt(mean(x^2) + eps)` is computed with XLA (a row reduction) and broadcast;
the kernel applies it and the learned weight in one pass.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp

from r15_rmsnorm_kernel import rmsnorm_kernel
from r15_rmsnorm_tiling import tiling_for


class RMSNorm:
  def __init__(self, hidden: int, eps: float = 1e-6):
    self.hidden = hidden
    self.eps = eps

  def setup(self):
    self.tiling = tiling_for(self.hidden)
    self.weight = jnp.ones((self.hidden,), jnp.float32)

  def __call__(self, x):
    if not hasattr(self, "tiling"):
      self.setup()
    ms = jnp.mean(x.astype(jnp.float32) ** 2, axis=-1, keepdims=True)
    inv_rms = jnp.broadcast_to(jax.lax.rsqrt(ms + self.eps), x.shape)
    weight = jnp.broadcast_to(self.weight, x.shape)
    return rmsnorm_kernel(x, inv_rms, weight, self.tiling)


def target():
  layer = RMSNorm(hidden=256)
  return layer, (jax.ShapeDtypeStruct((128, 256), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(jax.jit(RMSNorm(128))(jnp.ones((128, 128))).sum())
