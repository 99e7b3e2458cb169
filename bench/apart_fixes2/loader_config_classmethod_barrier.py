"""A TMA tile loader whose arrival barrier is described by a config classmethod.

`LoadConfig.arrival()` returns the barrier type so that kernels with one or two producers can ask
for the right arrival count. The body fetched it with `pl.get_global`, which only hands out GMEM
semaphores.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class LoadConfig:
  tile: int = 256
  dtype: object = jnp.float32
  producers: int = 1

  @classmethod
  def arrival(cls, producers: int = 1):
    return plgpu.Barrier(num_arrivals=producers)

  def tile_buffer(self):
    return plgpu.SMEM((self.tile,), self.dtype)

  def io(self):
    return jax.ShapeDtypeStruct((self.tile,), self.dtype)


def build_loader(cfg: LoadConfig, bias: float):
  def body(src_ref, dst_ref, tile_ref):
    arrived = pl.get_global(LoadConfig.arrival(cfg.producers))
    plgpu.copy_gmem_to_smem(src_ref, tile_ref, arrived)
    plgpu.barrier_wait(arrived)
    dst_ref[...] = tile_ref[...] + bias

  return plgpu.kernel(body, out_type=cfg.io(), scratch_types=[cfg.tile_buffer()])


TUNING = {
    "h100": LoadConfig(tile=256),
    "h200": LoadConfig(tile=256),
    "b200": LoadConfig(tile=512),
}


def loader_for(device_kind: str, bias: float = 1.0):
  cfg = TUNING.get(device_kind, LoadConfig())
  return cfg, build_loader(cfg, bias)


def target():
  cfg, fn = loader_for("h200")
  return fn, (cfg.io(),), "cuda"


if __name__ == "__main__":
  cfg, fn = loader_for("h200", bias=2.0)
  x = jnp.ones((cfg.tile,), cfg.dtype)
  np.testing.assert_array_equal(jax.jit(fn)(x), np.full((cfg.tile,), 3.0, np.float32))
  print("loaded", cfg.tile)
