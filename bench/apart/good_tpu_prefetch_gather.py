"""Row gather with scalar prefetch of the row indices (TPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def gather_kernel(idx_ref, x_ref, o_ref):
  o_ref[...] = x_ref[...]


def gather(idx, x):
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(idx.shape[0],),
      in_specs=[pl.BlockSpec((8, 128), lambda i, idx: (idx[i], 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i, idx: (i, 0)),
  )
  return pl.pallas_call(
      gather_kernel,
      out_shape=jax.ShapeDtypeStruct((idx.shape[0] * 8, 128), x.dtype),
      grid_spec=grid_spec,
  )(idx, x)


def target():
  return gather, (jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "tpu"


if __name__ == "__main__":
  print(gather(jnp.array([3, 1, 0, 2], jnp.int32), jnp.ones((64, 128), jnp.float32)))
