"""Double-buffered row stream for a weight-norm pass (Pallas TPU).

Rows of a large weight stay in HBM and stream through two VMEM slots; the copy
semaphores for the two slots are declared next to the slot buffers in
`StreamScratch.shapes()`.
"""
# fix-rate: kind=semaphore_array meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class StreamScratch:
  chunk_rows: int = 8
  width: int = 256
  slots: int = 2

  def shapes(self) -> list:
    return [
        pltpu.VMEM((self.slots, self.chunk_rows, self.width), jnp.float32),
        [pltpu.SemaphoreType.DMA] * self.slots,
    ]


def _sq_norm_body(w_hbm, o_ref, bufs, sems, *, scratch: StreamScratch, chunks: int):
  def fetch(c, slot):
    return pltpu.make_async_copy(
        w_hbm.at[pl.ds(c * scratch.chunk_rows, scratch.chunk_rows)], bufs.at[slot], sems.at[slot])

  fetch(0, 0).start()
  o_ref[...] = jnp.zeros_like(o_ref)

  def step(c, carry):
    slot = c % scratch.slots

    @pl.when(c + 1 < chunks)
    def _():
      fetch(c + 1, 1 - slot).start()

    fetch(c, slot).wait()
    rows = bufs[slot]
    o_ref[...] += rows * rows
    return carry

  jax.lax.fori_loop(0, chunks, step, 0)


def weight_sq_norm(w: jax.Array, scratch: StreamScratch = StreamScratch()) -> jax.Array:
  chunks = w.shape[0] // scratch.chunk_rows
  partial = pl.pallas_call(
      functools.partial(_sq_norm_body, scratch=scratch, chunks=chunks),
      out_shape=jax.ShapeDtypeStruct((scratch.chunk_rows, scratch.width), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=scratch.shapes(),
  )(w)
  return jnp.sum(partial)


def target():
  return jax.jit(weight_sq_norm), (jax.ShapeDtypeStruct((64, 256), jnp.float32),), "tpu"
