"""KV-cache int8 dequantisation for a paged decode step (Mosaic GPU, `pl.kernel` over a mesh).

A Mosaic GPU mesh kernel takes no `scratch_types`, so shared memory is allocated with
`pl.run_scoped` around the code that needs it. One CTA per page: the int8 page and its per-row scales
are staged, dequantised in f32 and written out in the cache dtype.
"""
# fix-rate: kind=run_scoped meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class PageLayout:
  page_size: int = 64
  head_dim: int = 128

  @property
  def page(self) -> tuple[int, int]:
    return (self.page_size, self.head_dim)


LAYOUTS = {64: PageLayout(64, 128), 32: PageLayout(32, 128), 16: PageLayout(16, 256)}


def _dequant_page(page_gmem, scale_gmem, out_gmem, page_id, layout: PageLayout):
  def staged(q_smem, s_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(page_gmem.at[page_id], q_smem, barrier)
    plgpu.copy_gmem_to_smem(scale_gmem.at[page_id], s_smem, barrier)
    plgpu.barrier_wait(barrier)
    wide = pl.get_global(plgpu.SMEM(layout.page, jnp.float32))
    wide[...] = q_smem[...].astype(jnp.float32) * s_smem[...]
    o_smem[...] = wide[...].astype(o_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, out_gmem.at[page_id])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(
      staged,
      plgpu.SMEM(layout.page, jnp.int8),
      plgpu.SMEM(layout.page, jnp.float32),
      plgpu.SMEM(layout.page, out_gmem.dtype),
      plgpu.Barrier(num_arrivals=2),
  )


@functools.partial(jax.jit, static_argnames=("dtype",))
def dequantize_pages(pages: jax.Array, scales: jax.Array, dtype=jnp.bfloat16) -> jax.Array:
  num_pages, page_size, _ = pages.shape
  layout = LAYOUTS[page_size]
  mesh = plgpu.Mesh(grid=(num_pages,), grid_names=("pages",))

  def body(page_gmem, scale_gmem, out_gmem):
    _dequant_page(page_gmem, scale_gmem, out_gmem, jax.lax.axis_index("pages"), layout)

  return pl.kernel(
      body,
      out_type=jax.ShapeDtypeStruct(pages.shape, dtype),
      mesh=mesh,
  )(pages, scales)


def target():
  pages = jax.ShapeDtypeStruct((16, 64, 128), jnp.int8)
  scales = jax.ShapeDtypeStruct((16, 64, 128), jnp.float32)
  return dequantize_pages, (pages, scales), "cuda"
