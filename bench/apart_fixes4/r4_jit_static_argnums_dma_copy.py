"""Paged KV-cache writer: copies freshly computed key/value rows into their cache pages.

The launcher is jitted with the page size static (it sets the block shape), the cache and the new
rows stay in HBM (`pl.ANY`) and each page is moved with one DMA.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class CacheLayout:
  num_pages: int
  page_size: int
  head_dim: int

  @property
  def rows(self) -> int:
    return self.num_pages * self.page_size


def _write_pages_kernel(page_ids_ref, new_hbm, cache_hbm, out_hbm, *, page_size: int):
  del cache_hbm  # aliased to out_hbm
  step = pl.program_id(0)
  dst_page = page_ids_ref[step]
  copy_sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(
      new_hbm.at[pl.ds(step * page_size, page_size)],
      out_hbm.at[pl.ds(dst_page * page_size, page_size)],
      copy_sem,
  )
  copy.start()
  copy.wait()


@functools.partial(jax.jit, static_argnums=(3,))
def write_pages(cache: jax.Array, new_rows: jax.Array, page_ids: jax.Array, page_size: int):
  """Writes `new_rows` (n_new_pages * page_size rows) into the pages `page_ids` of `cache`."""
  num_new_pages = new_rows.shape[0] // page_size
  kernel = functools.partial(_write_pages_kernel, page_size=page_size)
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(num_new_pages,),
      in_specs=[
          pl.BlockSpec(memory_space=pl.ANY),
          pl.BlockSpec(memory_space=pl.ANY),
      ],
      out_specs=pl.BlockSpec(memory_space=pl.ANY),
  )
  return pl.pallas_call(
      kernel,
      grid_spec=grid_spec,
      out_shape=jax.ShapeDtypeStruct(cache.shape, cache.dtype),
      input_output_aliases={2: 0},
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(page_ids, new_rows, cache)


def reference_write_pages(cache, new_rows, page_ids, page_size):
  for i, page in enumerate(page_ids.tolist()):
    cache = cache.at[page * page_size:(page + 1) * page_size].set(
        new_rows[i * page_size:(i + 1) * page_size])
  return cache


LAYOUT = CacheLayout(num_pages=8, page_size=16, head_dim=128)


def target():
  cache = jax.ShapeDtypeStruct((LAYOUT.rows, LAYOUT.head_dim), jnp.bfloat16)
  new_rows = jax.ShapeDtypeStruct((2 * LAYOUT.page_size, LAYOUT.head_dim), jnp.bfloat16)
  page_ids = jax.ShapeDtypeStruct((2,), jnp.int32)
  return (lambda c, n, p: write_pages(c, n, p, LAYOUT.page_size)), (cache, new_rows, page_ids), "tpu"


if __name__ == "__main__":
  key = jax.random.key(0)
  cache = jnp.zeros((LAYOUT.rows, LAYOUT.head_dim), jnp.bfloat16)
  new = jax.random.normal(key, (2 * LAYOUT.page_size, LAYOUT.head_dim), jnp.bfloat16)
  pages = jnp.array([5, 2], jnp.int32)
  got = write_pages(cache, new, pages, LAYOUT.page_size)
  want = reference_write_pages(cache, new, pages, LAYOUT.page_size)
  print("max abs err", float(jnp.max(jnp.abs(got.astype(jnp.float32) - want.astype(jnp.float32)))))
