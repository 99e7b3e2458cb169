"""Dequantize int8 KV-cache pages to bf16 with a TMA load per page (Mosaic GPU).

`PageDequantizer` builds its launch lazily (a `functools.cached_property`), so
constructing one per layer at model load time costs nothing until first use.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class PageDequantizer:
  def __init__(self, num_pages: int, page_elems: int = 256, scale: float = 1.0 / 127):
    self.num_pages = num_pages
    self.page_elems = page_elems
    self.scale = scale

  @property
  def total(self) -> int:
    return self.num_pages * self.page_elems

  @functools.cached_property
  def _launch(self):
    page = self.page_elems
    scale = self.scale

    def dequant_page(q_ref, out_ref, q_smem):
      p = jax.lax.axis_index("page")
      loaded = pl.get_global(plgpu.Barrier(num_arrivals=1))
      plgpu.copy_gmem_to_smem(q_ref.at[pl.ds(p * page, page)], q_smem, loaded)
      plgpu.barrier_wait(loaded)
      out_ref[pl.ds(p * page, page)] = (q_smem[...].astype(jnp.float32) * scale).astype(out_ref.dtype)

    return plgpu.kernel(
        dequant_page,
        out_type=jax.ShapeDtypeStruct((self.total,), jnp.bfloat16),
        grid=(self.num_pages,),
        grid_names=("page",),
        scratch_types=[plgpu.SMEM((page,), jnp.int8)],
    )

  def __call__(self, q: jax.Array) -> jax.Array:
    return self._launch(q)


LAYER_DEQUANTIZERS = [PageDequantizer(num_pages=4) for _ in range(2)]


@jax.jit
def dequantize_layer0(q: jax.Array) -> jax.Array:
  return LAYER_DEQUANTIZERS[0](q)


def target():
  return dequantize_layer0, (jax.ShapeDtypeStruct((LAYER_DEQUANTIZERS[0].total,), jnp.int8),), "cuda"


if __name__ == "__main__":
  q = jnp.arange(1024, dtype=jnp.int32).astype(jnp.int8)
  print(dequantize_layer0(q)[:8])
