"""A TPU tiled transpose-and-scale whose `pl.GridSpec` is built by a factory from a tuning table.

`_grid_spec(cfg)` builds the launch's grid spec; the kernel's transpose buffer was fetched with
`pl.get_global(pltpu.VMEM(...))` instead of being declared with the grid spec.
"""
# fix-rate: kind=scratch_grid_spec meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class TileConfig:
  block: int = 128
  scale: float = 2.0


TUNING = {
    "TPU v5 lite": TileConfig(block=128),
    "TPU v6 lite": TileConfig(block=256),
}


def config_for(device_kind: str) -> TileConfig:
  return TUNING.get(device_kind, TileConfig())


def transpose_scale_kernel(cfg: TileConfig, x_ref, o_ref):
  buf = pl.get_global(pltpu.VMEM((cfg.block, cfg.block), jnp.float32))
  buf[...] = x_ref[...].T
  o_ref[...] = buf[...] * cfg.scale


def _grid_spec(cfg: TileConfig, n: int) -> pl.GridSpec:
  blocks = n // cfg.block
  return pl.GridSpec(
      grid=(blocks, blocks),
      in_specs=[pl.BlockSpec((cfg.block, cfg.block), lambda i, j: (j, i))],
      out_specs=pl.BlockSpec((cfg.block, cfg.block), lambda i, j: (i, j)),
  )


def transpose_scale(cfg: TileConfig, x):
  n = x.shape[0]
  return pl.pallas_call(
      functools.partial(transpose_scale_kernel, cfg),
      grid_spec=_grid_spec(cfg, n),
      out_shape=jax.ShapeDtypeStruct((n, n), jnp.float32),
  )(x)


def target():
  cfg = config_for("TPU v5 lite")
  return functools.partial(transpose_scale, cfg), (jax.ShapeDtypeStruct((256, 256), jnp.float32),), "tpu"


if __name__ == "__main__":
  cfg = config_for(jax.devices()[0].device_kind)
  x = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256)
  np.testing.assert_allclose(jax.jit(functools.partial(transpose_scale, cfg))(x), np.asarray(x).T * cfg.scale)
  print("transpose ok")
