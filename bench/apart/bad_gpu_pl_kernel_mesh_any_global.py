"""Grid-synchronised kernel that tries to keep a global accumulator via get_global."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

MESH = plgpu.Mesh(grid=(4,), grid_names=("blk",))


def _body(x_ref, o_ref):
  acc = pl.get_global(pl.ANY((128,), jnp.float32))
  acc[...] = x_ref[...]
  o_ref[...] = acc[...]


def copy(x):
  return pl.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=MESH)(x)


def target():
  return copy, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(copy(jnp.ones((128,), jnp.float32)))
