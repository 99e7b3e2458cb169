"""Block specs and grid specs of the paged row-gather kernels, kept apart from the kernels so the
tuning script can build them without importing the kernel bodies."""

import dataclasses

import jax.numpy as jnp

from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GatherConfig:
  num_tokens: int
  page_rows: int
  pages_per_token: int
  width: int

  @property
  def out_rows(self) -> int:
    return self.num_tokens * self.page_rows


def _page_index_map(token, page, page_table_ref):
  return (page_table_ref[token, page], 0)


def make_gather_spec(cfg: GatherConfig) -> pltpu.PrefetchScalarGridSpec:
  """One grid step per (token, page); the page table is prefetched into SMEM."""
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(cfg.num_tokens, cfg.pages_per_token),
      in_specs=[
          pl.BlockSpec((cfg.page_rows, cfg.width), _page_index_map),
      ],
      out_specs=pl.BlockSpec((cfg.page_rows, cfg.width), lambda token, page, table: (token, 0)),
      scratch_shapes=[pltpu.VMEM((cfg.page_rows, cfg.width), jnp.float32)],
  )


DEFAULT_CONFIG = GatherConfig(num_tokens=4, page_rows=8, pages_per_token=4, width=128)
