"""Sum the rows of a paged table on TPU: a page table is scalar-prefetched and drives the BlockSpec.

The launch uses `pltpu.PrefetchScalarGridSpec`; the running sum over pages lived in a VMEM buffer
fetched with `pl.get_global`.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class PagedConfig:
  page_rows: int = 8
  cols: int = 128
  num_pages: int = 16
  pages_per_seq: int = 4


def paged_sum_kernel(cfg: PagedConfig, page_table_ref, pages_ref, out_ref):
  acc = pl.get_global(pltpu.VMEM((cfg.page_rows, cfg.cols), jnp.float32))
  p = pl.program_id(0)

  @pl.when(p == 0)
  def _zero():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += pages_ref[...]

  @pl.when(p == cfg.pages_per_seq - 1)
  def _store():
    out_ref[...] = acc[...]


def paged_sum(cfg: PagedConfig, page_table, pages):
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(cfg.pages_per_seq,),
      in_specs=[pl.BlockSpec((cfg.page_rows, cfg.cols), lambda p, table: (table[p], 0))],
      out_specs=pl.BlockSpec((cfg.page_rows, cfg.cols), lambda p, table: (0, 0)),
  )
  return pl.pallas_call(
      functools.partial(paged_sum_kernel, cfg),
      grid_spec=grid_spec,
      out_shape=jax.ShapeDtypeStruct((cfg.page_rows, cfg.cols), jnp.float32),
  )(page_table, pages)


def target():
  cfg = PagedConfig()
  return functools.partial(paged_sum, cfg), (
      jax.ShapeDtypeStruct((cfg.pages_per_seq,), jnp.int32),
      jax.ShapeDtypeStruct((cfg.num_pages * cfg.page_rows, cfg.cols), jnp.float32),
  ), "tpu"


if __name__ == "__main__":
  cfg = PagedConfig()
  table = jnp.array([3, 0, 7, 1], jnp.int32)
  pages = jnp.arange(cfg.num_pages * cfg.page_rows * cfg.cols, dtype=jnp.float32).reshape(-1, cfg.cols)
  got = jax.jit(functools.partial(paged_sum, cfg))(table, pages)
  want = sum(np.asarray(pages)[t * cfg.page_rows:(t + 1) * cfg.page_rows] for t in np.asarray(table))
  np.testing.assert_allclose(got, want)
  print("paged sum ok")
