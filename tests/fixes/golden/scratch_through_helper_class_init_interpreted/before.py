"""A body builds a small helper object per grid step; its __init__ asks get_global for the f32 tile it stages
rows in. Interpreted on the CPU: the tile becomes the body's scratch, handed to the object."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = (8, 128)


class RowStager:
  def __init__(self, x_ref, scale):
    self.x_ref = x_ref
    self.scale = scale
    self.tile = pl.get_global(pltpu.VMEM(TILE, jnp.float32))

  def staged(self):
    self.tile[...] = self.x_ref[...] * self.scale
    return self.tile[...]


def _body(x_ref, o_ref):
  o_ref[...] = RowStager(x_ref, 3.0).staged() + 1.0


def scale_rows(x):
  spec = pl.BlockSpec(TILE, lambda i: (i, 0))
  return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32), grid=(x.shape[0] // 8,),
                        in_specs=[spec], out_specs=spec, interpret=True)(x)


def target():
  return scale_rows, (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128),), "interpret"


def expected():
  return jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) * 3.0 + 1.0
