"""Double-buffered paged KV gather for TPU decode.

The page table is scalar-prefetched; step `i` starts the DMA of page `i + 1` into the other
slot before it consumes page `i`.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import r11_gather_resources as res


def _page_copy(kv_hbm, table_ref, buffers, sems, step):
  slot = step % res.NUM_SLOTS
  return pltpu.make_async_copy(kv_hbm.at[table_ref[step]], buffers.at[slot], sems.at[slot])


def _gather_body(table_ref, kv_hbm, o_ref, buffers):
  sems = pl.get_global(res.COPY_SEMAPHORES)
  step = pl.program_id(0)
  last = pl.num_programs(0) - 1

  @pl.when(step == 0)
  def _prime():
    _page_copy(kv_hbm, table_ref, buffers, sems, step).start()

  @pl.when(step < last)
  def _prefetch_next():
    _page_copy(kv_hbm, table_ref, buffers, sems, step + 1).start()

  _page_copy(kv_hbm, table_ref, buffers, sems, step).wait()
  o_ref[...] = buffers[step % res.NUM_SLOTS].astype(o_ref.dtype)


def gather_pages(page_table, kv_pages):
  num_pages = page_table.shape[0]
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(num_pages,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((None, res.PAGE_ROWS, res.HEAD_DIM), lambda i, table: (i, 0, 0)),
      scratch_shapes=[res.PAGE_BUFFERS],
  )
  return pl.pallas_call(
      _gather_body,
      out_shape=jax.ShapeDtypeStruct((num_pages, res.PAGE_ROWS, res.HEAD_DIM), jnp.float32),
      grid_spec=grid_spec,
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(page_table, kv_pages)


def target():
  args = (
      jax.ShapeDtypeStruct((6,), jnp.int32),
      jax.ShapeDtypeStruct((32, res.PAGE_ROWS, res.HEAD_DIM), res.PAGE_DTYPE),
  )
  return gather_pages, args, "tpu"
