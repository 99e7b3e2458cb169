"""A softplus kernel configured by named presets; the "debug" preset runs it in interpret mode.

`PRESETS["debug"]` sets `interpret=True` so that numerics can be checked on a CPU. The staging tile
was fetched with `pl.get_global(plgpu.SMEM(...))`.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SoftplusConfig:
  width: int = 128
  beta: float = 1.0
  interpret: bool = False

  def staging(self):
    return plgpu.SMEM((self.width,), jnp.float32)


PRESETS = {
    "debug": SoftplusConfig(width=64, interpret=True),
    "h100": SoftplusConfig(width=256),
    "h200": SoftplusConfig(width=256),
}


def softplus_kernel(cfg: SoftplusConfig):
  def body(x_ref, y_ref):
    staged = pl.get_global(cfg.staging())
    staged[...] = x_ref[...] * cfg.beta
    y_ref[...] = jnp.log1p(jnp.exp(staged[...])) / cfg.beta

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((cfg.width,), jnp.float32),
      interpret=cfg.interpret,
  )


def sample(cfg):
  return jnp.linspace(-2.0, 2.0, cfg.width, dtype=jnp.float32)


def expected():
  cfg = PRESETS["debug"]
  x = np.asarray(sample(cfg))
  return np.asarray(jnp.log1p(jnp.exp(jnp.asarray(x * cfg.beta))) / cfg.beta)


def target():
  cfg = PRESETS["debug"]
  return softplus_kernel(cfg), (sample(cfg),), "interpret"


if __name__ == "__main__":
  cfg = PRESETS["debug"]
  np.testing.assert_allclose(jax.jit(softplus_kernel(cfg))(sample(cfg)), expected(), rtol=1e-6)
  print("softplus ok")
