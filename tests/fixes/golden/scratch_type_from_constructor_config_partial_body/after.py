"""PAL001: get_global of an SMEM type a config method returns, in a body a kernel class binds with
functools.partial to the config its constructor was given (the type is followed through __init__)."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
  width: int = 128

  def staging(self, rows):
    return plgpu.SMEM((rows * self.width,), jnp.float32)


def body(cfg, rows, x_ref, o_ref, stage):
  stage[...] = x_ref[...]
  o_ref[...] = stage[...]


class Kernel:
  def __init__(self, cfg):
    self.cfg = cfg

  def __call__(self, x):
    rows = x.shape[0] // self.cfg.width
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return plgpu.kernel(
      functools.partial(body, self.cfg, rows),
      out_type=out,
      scratch_types=[self.cfg.staging(rows)],
    )(x)


def target():
  return Kernel(Config()), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
