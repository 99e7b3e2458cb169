"""Manual HBM -> VMEM -> HBM streaming of a KV cache page for TPU, on a TensorCore mesh.

Written with `pl.kernel` so the body drives its own DMAs: each page is copied into a VMEM
staging buffer, the dequantisation scale is applied in place, and the page is copied back.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class PageLayout:
  page_rows: int = 16
  head_dim: int = 128
  num_pages: int = 4
  scale: float = 0.125

  @property
  def page_shape(self):
    return (self.page_rows, self.head_dim)


def _page_copy(src, dst):
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(src, dst, sem)
  copy.start()
  copy.wait()


def _rescale_pages(layout: PageLayout, pages_hbm, out_hbm):
  staging = pl.get_global(pltpu.VMEM(layout.page_shape, jnp.float32))

  @pl.loop(0, layout.num_pages)
  def _(p):
    _page_copy(pages_hbm.at[p], staging)
    staging[...] = staging[...] * layout.scale
    _page_copy(staging, out_hbm.at[p])


@functools.lru_cache(maxsize=None)
def _core_mesh():
  return pltpu.create_tensorcore_mesh("core", num_cores=1)


def rescale_kv_pages(pages, layout: PageLayout = PageLayout()):
  return pl.kernel(
      functools.partial(_rescale_pages, layout),
      out_type=jax.ShapeDtypeStruct(pages.shape, pages.dtype),
      mesh=_core_mesh(),
  )(pages)


def target():
  layout = PageLayout()
  args = (
      jax.ShapeDtypeStruct((layout.num_pages, *layout.page_shape), jnp.float32),
  )
  return rescale_kv_pages, args, "tpu"
