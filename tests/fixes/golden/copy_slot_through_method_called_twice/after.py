"""PAL005: a DMA((2,)) array given whole to the copy a dataclass method builds for a double-buffered stream."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


@dataclasses.dataclass(frozen=True)
class Stream:
  rows: int
  chunks: int

  def copy(self, src_hbm, slots, sems, chunk):
    slot = chunk % 2
    return pltpu.make_async_copy(
      src_hbm.at[pl.ds(chunk * self.rows, self.rows)], slots.at[slot], sems.at[slot]
    )


def body(x_hbm, o_ref, slots, sems):
  stream = Stream(rows=8, chunks=1)
  stream.copy(x_hbm, slots, sems, 0).start()
  stream.copy(x_hbm, slots, sems, 0).wait()
  o_ref[...] = slots[0]


def target():
  return pl.pallas_call(
      body, out_shape=X, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
  ), (X,), "tpu"
