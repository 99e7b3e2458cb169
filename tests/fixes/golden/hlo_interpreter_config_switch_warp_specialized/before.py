"""A warp-specialized Mosaic GPU kernel (two warpgroups, each scaling its half) whose run config carries the
interpret switch: interpret=True would run it through the generic interpreter, which has no collective run_scoped;
the switch chooses JAX's GPU interpreter instead, and stays a switch."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class RunConfig:
  interpret: bool = False
  halves: int = 2


def _halves(x_gmem, o_gmem):
  wg = jax.lax.axis_index("wg")
  rows = pl.ds(wg * 8, 8)
  o_gmem[rows] = x_gmem[rows] * (wg + 1).astype(jnp.float32)


def scale_halves(x, cfg: RunConfig = RunConfig()):
  return plgpu.kernel(
      _halves,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      num_threads=cfg.halves,
      thread_name="wg",
      interpret=cfg.interpret,
  )(x)


def _x():
  return np.arange(16 * 128, dtype=np.float32).reshape(16, 128)


def target():
  return lambda x: scale_halves(x, RunConfig(interpret=True)), (jnp.asarray(_x()),), "interpret"


def expected():
  x = _x()
  return np.concatenate([x[:8], 2 * x[8:]])
