"""Scale a vector through a shared-memory landing zone declared as kernel scratch; sizes from a config."""
# fix-rate: clean

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class LaneConfig:
  length: int = 256
  dtype: object = jnp.float32
  scale: float = 3.0

  @property
  def landing_zone(self):
    return plgpu.SMEM((self.length,), self.dtype)

  @property
  def vector(self):
    return jax.ShapeDtypeStruct((self.length,), self.dtype)


def build(cfg: LaneConfig):
  def body(src_ref, dst_ref, zone):
    zone[...] = src_ref[...] * cfg.scale
    dst_ref[...] = zone[...]

  return plgpu.kernel(body, out_type=cfg.vector, scratch_types=[cfg.landing_zone])


def target():
  cfg = LaneConfig()
  return build(cfg), (cfg.vector,), "cuda"
