"""Row-block copy through a VMEM stage, double buffered with DMA semaphores; the grid spec is built here."""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SLOTS = 2
BLOCK = (8, 128)


def staged_copy(offsets_ref, src_hbm, out_ref, stage):
  i = pl.program_id(0)
  dma = pl.get_global(pltpu.SemaphoreType.DMA((SLOTS,)))
  copy = pltpu.make_async_copy(src_hbm.at[pl.ds(offsets_ref[i], BLOCK[0])], stage.at[i % SLOTS], dma.at[i % SLOTS])
  copy.start()
  copy.wait()
  out_ref[...] = stage[i % SLOTS] + 1.0


def copy_spec(blocks):
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(blocks,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(BLOCK, lambda i, offsets: (i, 0)),
      scratch_shapes=[pltpu.VMEM((SLOTS, *BLOCK), jnp.float32)],
  )
