"""PAL001: get_global of an SMEM type a dict of lambdas builds, picked by an attribute the constructor
sets (from each construction: a constant, and every key of the dict a loop goes over)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGING = {
    "narrow": lambda n: plgpu.SMEM((n,), jnp.float32),
    "wide": lambda n: plgpu.SMEM((2 * n,), jnp.float32),
}


class Kernel:
  def __init__(self, kind, n=128):
    self.kind = kind
    self.n = n

  def _body(self, x_ref, o_ref, staged):
    staged[pl.ds(0, self.n)] = x_ref[...]
    o_ref[...] = staged[pl.ds(0, self.n)]

  def __call__(self, x):
    return plgpu.kernel(
      self._body,
      out_type=jax.ShapeDtypeStruct((self.n,), jnp.float32),
      scratch_types=[STAGING[self.kind](self.n)],
    )(x)


def every_kind(x):
  return [Kernel(kind)(x) for kind in STAGING]


def target():
  return Kernel("narrow"), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
