"""Element-wise activations that stage their input in shared memory; staging types live in a registry.

Each activation names its staging buffer in `STAGING`, a module-level table of buffer builders, so
that the wide activations (GELU) can ask for a larger tile than the cheap ones.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGING = {
    "relu": lambda n: plgpu.SMEM((n,), jnp.float32),
    "leaky_relu": lambda n: plgpu.SMEM((n,), jnp.float32),
    "gelu": lambda n: plgpu.SMEM((2 * n,), jnp.float32),
}

ACTIVATIONS = {
    "relu": lambda v: jnp.maximum(v, 0.0),
    "leaky_relu": lambda v: jnp.where(v > 0.0, v, 0.01 * v),
}


class ActivationKernel:
  """One activation over vectors of `n` elements."""

  def __init__(self, op: str, n: int = 256):
    if op not in ACTIVATIONS:
      raise ValueError(f"unknown activation {op!r}")
    self.op = op
    self.n = n

  @property
  def io(self):
    return jax.ShapeDtypeStruct((self.n,), jnp.float32)

  def _body(self, x_ref, y_ref):
    staged = pl.get_global(STAGING[self.op](self.n))
    staged[...] = x_ref[...]
    y_ref[...] = ACTIVATIONS[self.op](staged[...])

  def build(self):
    return plgpu.kernel(self._body, out_type=self.io)

  def __call__(self, x):
    return self.build()(x)


def target():
  act = ActivationKernel("leaky_relu")
  return act, (act.io,), "cuda"


if __name__ == "__main__":
  for name in ACTIVATIONS:
    act = ActivationKernel(name)
    x = jnp.linspace(-2.0, 2.0, act.n, dtype=jnp.float32)
    got = jax.jit(act)(x)
    np.testing.assert_allclose(got, ACTIVATIONS[name](x), rtol=1e-6)
    print(name, "ok")
