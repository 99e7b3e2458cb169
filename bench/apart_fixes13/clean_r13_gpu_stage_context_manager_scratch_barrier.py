"""TMA-staged bias add for Mosaic GPU, with a small context-manager class for the load.

`with TmaStage(src, dst) as tile:` issues the asynchronous GMEM->SMEM copy on entry and
waits for it before handing the tile over; the kernel only sees a ready SMEM tile.
"""

# fix-rate: clean

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class TmaStage:
  """Copies `src` into the SMEM tile `dst` and waits for it."""

  def __init__(self, src, dst, barrier):
    self.src = src
    self.dst = dst
    self.barrier = barrier

  def __enter__(self):
    barrier = self.barrier
    plgpu.copy_gmem_to_smem(self.src, self.dst, barrier)
    plgpu.barrier_wait(barrier)
    return self.dst

  def __exit__(self, *exc):
    return False


@dataclasses.dataclass(frozen=True)
class BiasAddConfig:
  block: int = 128

  def tile_type(self, dtype):
    return plgpu.SMEM((self.block,), dtype)


def _bias_add_body(cfg, x_ref, b_ref, o_ref, x_tile, barrier):
  i = lax.axis_index("blocks")
  sl = pl.ds(i * cfg.block, cfg.block)
  with TmaStage(x_ref.at[sl], x_tile, barrier) as tile:
    o_ref[sl] = tile[...] + b_ref[sl]


def bias_add(x, b, cfg: BiasAddConfig = BiasAddConfig()):
  (n,) = x.shape
  return plgpu.kernel(
      functools.partial(_bias_add_body, cfg),
      out_type=jax.ShapeDtypeStruct((n,), x.dtype),
      grid=(n // cfg.block,),
      grid_names=("blocks",),
      scratch_types=[cfg.tile_type(x.dtype), plgpu.Barrier(num_arrivals=1)],
  )(x, b)


def target():
  spec = jax.ShapeDtypeStruct((1024,), jnp.float32)
  return jax.jit(bias_add), (spec, spec), "cuda"


if __name__ == "__main__":
  x = jnp.arange(1024, dtype=jnp.float32)
  print(jax.jit(bias_add)(x, x)[:4])
