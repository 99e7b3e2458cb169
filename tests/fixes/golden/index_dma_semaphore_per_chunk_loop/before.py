"""Three chunks of the weights streamed in a `for` loop, one DMA each, all given the whole DMA((3,)) array: each
chunk's copy gets the semaphore of its loop index (the rows it copies are a range, `pl.ds`, not a slot)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CHUNKS = 3
CHUNK_ROWS = 8


def stream_body(w_hbm, o_ref, w_vmem, dma_sems):
  for chunk in range(CHUNKS):
    rows = pl.ds(chunk * CHUNK_ROWS, CHUNK_ROWS)
    fetch = pltpu.make_async_copy(w_hbm.at[rows], w_vmem.at[rows], dma_sems)
    fetch.start()
    fetch.wait()
  o_ref[...] = w_vmem[...] + 1.0


def stream(w):
  return pl.pallas_call(
      stream_body,
      out_shape=jax.ShapeDtypeStruct(w.shape, w.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=[pltpu.VMEM(w.shape, w.dtype), pltpu.SemaphoreType.DMA((CHUNKS,))],
  )(w)


def target():
  return stream, (jax.ShapeDtypeStruct((CHUNKS * CHUNK_ROWS, 128), jnp.float32),), "tpu"
