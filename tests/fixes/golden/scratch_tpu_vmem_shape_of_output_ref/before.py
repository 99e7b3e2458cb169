"""A TPU matmul (jax's ops/tpu/matmul.py shape) whose accumulator is asked of get_global with its output tile's
shape, `o_tile_ref.shape`: at the launch that is the output BlockSpec's block shape, `(bm, bn)`, so the VMEM
scratch is written with it, for every configuration, not spelled from the one the analysis sees."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def matmul_kernel(x_tile_ref, y_tile_ref, o_tile_ref):
  acc_ref = pl.get_global(pltpu.VMEM(o_tile_ref.shape, jnp.float32))

  @pl.when(pl.program_id(2) == 0)
  def init():
    acc_ref[...] = jnp.zeros_like(acc_ref)

  acc_ref[...] += jnp.dot(x_tile_ref[...], y_tile_ref[...], preferred_element_type=jnp.float32)
  o_tile_ref[...] = acc_ref[...].astype(o_tile_ref.dtype)


def matmul(x, y, *, block_shape, block_k=128):
  bm, bn = block_shape
  return pl.pallas_call(
      matmul_kernel,
      out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=0,
          in_specs=[pl.BlockSpec((bm, block_k), lambda i, _, k: (i, k)),
                    pl.BlockSpec((block_k, bn), lambda _, j, k: (k, j))],
          out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
          grid=(x.shape[0] // bm, y.shape[1] // bn, x.shape[1] // block_k),
      ),
  )(x, y)


def target():
  x = jax.ShapeDtypeStruct((256, 256), jnp.float32)
  return functools.partial(matmul, block_shape=(128, 128)), (x, x), "tpu"
