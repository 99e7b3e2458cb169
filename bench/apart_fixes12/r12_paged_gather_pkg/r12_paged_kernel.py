"""TPU kernel gathering KV pages by a page table held in scalar prefetch (SMEM).

Sequence `b`'s pages `page_table[b, :]` are copied HBM -> VMEM two at a time (double buffered),
scaled by the per-sequence KV scale, and written to the dense output block of that sequence.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GatherConfig:
  pages_per_seq: int
  page_size: int
  head_dim: int

  @property
  def page(self) -> tuple[int, int]:
    return (self.page_size, self.head_dim)


def _fetch_page(cache_hbm, page_table_ref, b, p, buf, slot, sems):
  page_id = page_table_ref[b, p]
  return pltpu.make_async_copy(cache_hbm.at[page_id], buf.at[slot], sems.at[slot])


def paged_gather_kernel(page_table_ref, scale_ref, cache_hbm, out_ref, buf, *, cfg: GatherConfig):
  b = pl.program_id(0)
  sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))
  _fetch_page(cache_hbm, page_table_ref, b, 0, buf, 0, sems).start()
  for p in range(cfg.pages_per_seq):
    slot = p % 2
    if p + 1 < cfg.pages_per_seq:
      _fetch_page(cache_hbm, page_table_ref, b, p + 1, buf, 1 - slot, sems).start()
    _fetch_page(cache_hbm, page_table_ref, b, p, buf, slot, sems).wait()
    rows = pl.ds(p * cfg.page_size, cfg.page_size)
    out_ref[0, rows, :] = (buf[slot].astype(jnp.float32) * scale_ref[b]).astype(out_ref.dtype)


def gather_grid_spec(cfg: GatherConfig, batch: int, dtype):
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=2,
      grid=(batch,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((1, cfg.pages_per_seq * cfg.page_size, cfg.head_dim),
                             lambda b, table, scale: (b, 0, 0)),
      scratch_shapes=[pltpu.VMEM((2, *cfg.page), dtype)],
  )
