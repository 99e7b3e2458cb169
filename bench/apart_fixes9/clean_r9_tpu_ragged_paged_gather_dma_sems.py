"""Gather of KV-cache pages for ragged paged attention (TPU).

The KV cache is a pool of fixed-size pages in HBM; each sequence owns ``pages_per_seq``
pages listed in a page table. For every sequence (one grid step) the kernel copies its pages
into a VMEM window with manual DMAs, double-buffered over two slots, and writes the
contiguous window to the output. The page table is scalar-prefetched into SMEM.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: clean

NUM_SLOTS = 2


@dataclasses.dataclass(frozen=True)
class PagedGatherConfig:
  page_size: int = 16
  head_dim: int = 128
  pages_per_seq: int = 4

  @property
  def window_rows(self) -> int:
    return self.page_size * self.pages_per_seq


def _gather_body(page_table_ref, pages_hbm, o_ref, slots, copy_sems, *, cfg: PagedGatherConfig):
  seq = pl.program_id(0)

  def page_copy(p):
    page = page_table_ref[seq * cfg.pages_per_seq + p]
    slot = p % NUM_SLOTS
    return pltpu.make_async_copy(pages_hbm.at[page], slots.at[slot], copy_sems.at[slot])

  page_copy(0).start()
  for p in range(cfg.pages_per_seq):
    if p + 1 < cfg.pages_per_seq:
      page_copy(p + 1).start()
    page_copy(p).wait()
    o_ref[pl.ds(p * cfg.page_size, cfg.page_size), :] = slots[p % NUM_SLOTS]


def gather_pages(page_table: jax.Array, pages: jax.Array, cfg: PagedGatherConfig = PagedGatherConfig()):
  """``pages``: [num_pages, page_size, head_dim]; ``page_table``: [num_seqs * pages_per_seq] int32."""
  num_seqs = page_table.shape[0] // cfg.pages_per_seq
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(num_seqs,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((cfg.window_rows, cfg.head_dim), lambda s, table: (s, 0)),
      scratch_shapes=[
          pltpu.VMEM((NUM_SLOTS, cfg.page_size, cfg.head_dim), pages.dtype),
          pltpu.SemaphoreType.DMA((NUM_SLOTS,)),
      ],
  )
  return pl.pallas_call(
      functools.partial(_gather_body, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((num_seqs * cfg.window_rows, cfg.head_dim), pages.dtype),
      grid_spec=grid_spec,
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(page_table, pages)


def target():
  table = jax.ShapeDtypeStruct((8,), jnp.int32)
  pages = jax.ShapeDtypeStruct((32, 16, 128), jnp.float32)
  return gather_pages, (table, pages), "tpu"


if __name__ == "__main__":
  pages = jnp.arange(32 * 16 * 128, dtype=jnp.float32).reshape(32, 16, 128)
  table = jnp.array([3, 1, 7, 0, 9, 2, 5, 4], jnp.int32)
  print(gather_pages(table, pages)[::16, 0])
