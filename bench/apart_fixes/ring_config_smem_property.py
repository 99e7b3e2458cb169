"""Scale a vector through a shared-memory landing zone; sizes come from a config object."""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class RingConfig:
  length: int = 256
  dtype: object = jnp.float32
  scale: float = 3.0

  @property
  def landing_zone(self):
    return plgpu.SMEM((self.length,), self.dtype)

  @property
  def vector(self):
    return jax.ShapeDtypeStruct((self.length,), self.dtype)


def build(cfg: RingConfig):
  def body(src_ref, dst_ref):
    zone = pl.get_global(cfg.landing_zone)
    zone[...] = src_ref[...] * cfg.scale
    dst_ref[...] = zone[...]

  return plgpu.kernel(body, out_type=cfg.vector)


def target():
  cfg = RingConfig()
  return build(cfg), (cfg.vector,), "cuda"
