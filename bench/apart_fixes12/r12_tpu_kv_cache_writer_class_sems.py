"""In-place KV-cache page write for a decode step (TPU, tpu-inference style).

For every sequence `b`, the freshly computed page `new_kv[b]` is written to cache page `slot[b]`
(scalar prefetch). The cache is aliased to the output and stays in HBM; the writes are DMAs issued by a
small `PageWriter` helper object that owns the copy descriptors and their semaphores.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class PageWriter:
  """Issues the VMEM -> HBM page copy of one grid step; one semaphore per K/V half."""

  def __init__(self, src_ref, cache_hbm, slot_ref):
    self.src_ref = src_ref
    self.cache_hbm = cache_hbm
    self.slot_ref = slot_ref
    self.sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))

  def _copies(self, b):
    page = self.slot_ref[b]
    return [
        pltpu.make_async_copy(self.src_ref.at[0, half], self.cache_hbm.at[page, half], self.sems.at[half])
        for half in range(2)
    ]

  def write(self, b):
    copies = self._copies(b)
    for c in copies:
      c.start()
    for c in copies:
      c.wait()


@dataclasses.dataclass(frozen=True)
class CacheLayout:
  page_size: int
  head_dim: int

  def block(self):
    return (1, 2, self.page_size, self.head_dim)


def _write_kernel(slot_ref, new_kv_ref, cache_in_hbm, cache_out_hbm):
  del cache_in_hbm  # aliased with cache_out_hbm
  b = pl.program_id(0)
  PageWriter(new_kv_ref, cache_out_hbm, slot_ref).write(b)


@functools.partial(jax.jit, donate_argnums=(2,))
def write_pages(slots, new_kv, cache):
  batch, _, page_size, head_dim = new_kv.shape
  layout = CacheLayout(page_size, head_dim)
  return pl.pallas_call(
      _write_kernel,
      out_shape=jax.ShapeDtypeStruct(cache.shape, cache.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(batch,),
          in_specs=[pl.BlockSpec(layout.block(), lambda b, slots: (b, 0, 0, 0)),
                    pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec(memory_space=pl.ANY),
      ),
      input_output_aliases={2: 0},
  )(slots, new_kv, cache)


def target():
  slots = jax.ShapeDtypeStruct((8,), jnp.int32)
  new_kv = jax.ShapeDtypeStruct((8, 2, 16, 128), jnp.bfloat16)
  cache = jax.ShapeDtypeStruct((64, 2, 16, 128), jnp.bfloat16)
  return write_pages, (slots, new_kv, cache), "tpu"
