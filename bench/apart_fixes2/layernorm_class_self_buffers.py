"""A LayerNorm kernel class that keeps the types of its on-chip buffers in a dict on `self`.

The class is configured once per hidden size; `self.buffers` names every buffer the body uses. The
centred activations were fetched with `pl.get_global(self.buffers["centered"])`.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class LayerNormKernel:
  def __init__(self, hidden: int = 256, eps: float = 1e-5, dtype=jnp.float32):
    self.hidden = hidden
    self.eps = eps
    self.dtype = dtype
    self.buffers = {
        "centered": plgpu.SMEM((hidden,), dtype),
    }

  @property
  def vector(self):
    return jax.ShapeDtypeStruct((self.hidden,), self.dtype)

  def body(self, x_ref, gamma_ref, beta_ref, y_ref):
    centered = pl.get_global(self.buffers["centered"])
    x = x_ref[...]
    centered[...] = x - jnp.mean(x)
    var = jnp.mean(centered[...] * centered[...])
    y_ref[...] = centered[...] * jax.lax.rsqrt(var + self.eps) * gamma_ref[...] + beta_ref[...]

  def compile(self):
    return plgpu.kernel(self.body, out_type=self.vector)

  def __call__(self, x, gamma, beta):
    return self.compile()(x, gamma, beta)


def reference(x, gamma, beta, eps=1e-5):
  x = np.asarray(x)
  c = x - x.mean()
  return c / np.sqrt((c * c).mean() + eps) * np.asarray(gamma) + np.asarray(beta)


def target():
  ln = LayerNormKernel()
  return ln, (ln.vector, ln.vector, ln.vector), "cuda"


if __name__ == "__main__":
  ln = LayerNormKernel()
  x = jnp.linspace(-3.0, 5.0, ln.hidden, dtype=jnp.float32)
  gamma = jnp.ones((ln.hidden,), jnp.float32)
  beta = jnp.zeros((ln.hidden,), jnp.float32)
  np.testing.assert_allclose(jax.jit(ln)(x, gamma, beta), reference(x, gamma, beta), rtol=1e-4, atol=1e-5)
  print("layernorm ok")
