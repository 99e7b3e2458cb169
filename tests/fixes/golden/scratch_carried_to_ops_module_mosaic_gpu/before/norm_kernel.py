"""Mosaic GPU kernel module: a row-scaling body whose staging tile is shaped by the config it is given."""
import dataclasses

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

LANES = 128


@dataclasses.dataclass(frozen=True)
class TileConfig:
  rows: int
  scale: float = 2.0


def scale_body(x_gmem, o_gmem, *, cfg: TileConfig):
  staged = pl.get_global(plgpu.SMEM((cfg.rows, LANES), jnp.float32))
  staged[...] = x_gmem[...] * cfg.scale
  o_gmem[...] = staged[...]
