"""A double-buffered weight stream on TPU: the next tile's copy is started by a helper, and each step waits on
its slot's DMA semaphore with pl.semaphore_wait."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = 64


def issue(w_hbm, tiles, landed, tile, slot):
  pltpu.make_async_copy(w_hbm.at[pl.ds(tile * TILE, TILE)], tiles.at[slot], landed.at[slot]).start()


def stream_kernel(w_hbm, o_ref, tiles, landed):
  count = w_hbm.shape[0] // TILE
  issue(w_hbm, tiles, landed, 0, 0)

  def step(tile, acc):
    slot = tile % 2

    @pl.when(tile + 1 < count)
    def _():
      issue(w_hbm, tiles, landed, tile + 1, 1 - slot)

    pl.semaphore_wait(landed.at[slot])
    return acc + tiles[slot]

  o_ref[...] = jax.lax.fori_loop(0, count, step, jnp.zeros((TILE, 128), jnp.float32))


def tile_sum(w):
  return pl.pallas_call(
      stream_kernel,
      out_shape=jax.ShapeDtypeStruct((TILE, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=[pltpu.VMEM((2, TILE, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
  )(w)


def target():
  return tile_sum, (jax.ShapeDtypeStruct((512, 128), jnp.float32),), "tpu"
