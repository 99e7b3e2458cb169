"""Row sums of an HBM matrix, one row block at a time, run by the TPU interpreter: the block's copy is started
with pltpu.async_copy and waited on through its semaphore."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 8


def _row_sums(x_hbm, o_ref, staging, landed):
  @pl.loop(0, x_hbm.shape[0] // BLOCK)
  def _(i):
    rows = pl.ds(pl.multiple_of(i * BLOCK, BLOCK), BLOCK)
    fetch = pltpu.async_copy(x_hbm.at[rows], staging, landed)
    pl.semaphore_wait(landed, 1)
    o_ref[rows, :] = jnp.broadcast_to(jnp.sum(staging[...], axis=1, keepdims=True), (BLOCK, 128))


@functools.partial(jax.jit, static_argnames=("interpret",))
def row_sums(x, interpret=pltpu.InterpretParams()):
  return pl.pallas_call(
      _row_sums,
      out_shape=jax.ShapeDtypeStruct((x.shape[0], 128), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.VMEM((BLOCK, x.shape[1]), x.dtype), pltpu.SemaphoreType.DMA],
      interpret=interpret,
  )(x)


def _x():
  return np.arange(32 * 128, dtype=np.float32).reshape(32, 128) % 3


def target():
  return row_sums, (jnp.asarray(_x()),), "interpret"


def expected():
  return np.broadcast_to(_x().sum(axis=1, keepdims=True), (32, 128))
