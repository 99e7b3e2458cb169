"""Gather of KV-cache pages into a contiguous block (Pallas TPU).

The decode path of the paged attention needs the pages of one sequence laid out
contiguously for the prefill-style kernel that follows. Page indices arrive by
scalar prefetch; each grid step copies one page from HBM into a VMEM staging
buffer and writes it to its output block.

Block sizes come from a tuning table keyed by ``(page_size, head_dim)`` in the
style of tpu-inference's ``get_tuned_block_sizes``.
"""

# fix-rate: clean

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# (page_size, head_dim) -> pages gathered per grid step
_TUNED_PAGES_PER_STEP = {
    (16, 128): 1,
    (32, 128): 1,
    (64, 256): 1,
}


def get_pages_per_step(page_size: int, head_dim: int) -> int:
  return _TUNED_PAGES_PER_STEP.get((page_size, head_dim), 1)


def _gather_kernel(page_ids_ref, kv_hbm_ref, out_ref, page_vmem, copy_sem):
  step = pl.program_id(0)
  page = page_ids_ref[step]
  copy = pltpu.make_async_copy(kv_hbm_ref.at[page], page_vmem, copy_sem)
  copy.start()
  copy.wait()
  out_ref[...] = page_vmem[...]


@functools.partial(jax.jit, static_argnames=("num_pages",))
def gather_pages(kv_pages: jax.Array, page_ids: jax.Array, num_pages: int):
  """``kv_pages``: ``(total_pages, page_size, head_dim)``; returns ``(num_pages * page_size, head_dim)``."""
  _, page_size, head_dim = kv_pages.shape
  if get_pages_per_step(page_size, head_dim) != 1:
    raise NotImplementedError("multi-page steps")
  return pl.pallas_call(
      _gather_kernel,
      out_shape=jax.ShapeDtypeStruct((num_pages * page_size, head_dim), kv_pages.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(num_pages,),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec((page_size, head_dim), lambda i, ids: (i, 0)),
          scratch_shapes=[
              pltpu.VMEM((page_size, head_dim), kv_pages.dtype),
              pltpu.SemaphoreType.DMA,
          ],
      ),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(page_ids, kv_pages)


def target():
  return (
      functools.partial(gather_pages, num_pages=8),
      (
          jax.ShapeDtypeStruct((32, 16, 128), jnp.float32),
          jax.ShapeDtypeStruct((8,), jnp.int32),
      ),
      "tpu",
  )


if __name__ == "__main__":
  kv = jnp.arange(32 * 16 * 128, dtype=jnp.float32).reshape(32, 16, 128).astype(jnp.bfloat16)
  ids = jnp.array([3, 1, 4, 1, 5, 9, 2, 6], jnp.int32)
  print(gather_pages(kv, ids, num_pages=8)[::16, 0])
