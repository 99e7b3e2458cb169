"""Bias-add through a TMA-loaded tile; a small helper issues the copy with the barrier passed positionally.

`TmaConfig.arrival_barrier` describes the barrier one TMA copy arrives on. The body fetched it with
`pl.get_global` and handed it to `_tma_load(src, dst, barrier)`.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TmaConfig:
  tile: int = 128
  dtype: object = jnp.float32

  @property
  def arrival_barrier(self):
    return plgpu.Barrier(num_arrivals=1)

  @property
  def tile_smem(self):
    return plgpu.SMEM((self.tile,), self.dtype)

  @property
  def vector(self):
    return jax.ShapeDtypeStruct((self.tile,), self.dtype)


def _tma_load(src_ref, dst_smem, barrier):
  """Copy a GMEM block into shared memory and wait until it has landed."""
  plgpu.copy_gmem_to_smem(src_ref, dst_smem, barrier)
  plgpu.barrier_wait(barrier)


def make_bias_add(cfg: TmaConfig):
  def body(x_ref, b_ref, y_ref, tile):
    landed = pl.get_global(cfg.arrival_barrier)
    _tma_load(x_ref, tile, landed)
    y_ref[...] = tile[...] + b_ref[...]

  return plgpu.kernel(body, out_type=cfg.vector, scratch_types=[cfg.tile_smem])


def target():
  cfg = TmaConfig()
  return make_bias_add(cfg), (cfg.vector, cfg.vector), "cuda"


if __name__ == "__main__":
  cfg = TmaConfig()
  x = jnp.arange(cfg.tile, dtype=cfg.dtype)
  b = jnp.full((cfg.tile,), 0.5, cfg.dtype)
  np.testing.assert_allclose(jax.jit(make_bias_add(cfg))(x, b), np.asarray(x) + 0.5)
  print("bias add ok")
