"""Per-column running max over a sequential row grid (Pallas TPU).

Used to compute the per-channel activation ranges of the int8 calibration pass:
the grid walks the rows in ``block_rows`` blocks and a scratch accumulator keeps
the running column max between steps; the last step writes it out.

The launcher is built by ``make_colmax`` from a ``CalibrationConfig``, cached
per config, in the style of the maxtext quantization kernels.
"""

# fix-rate: kind=memory_space meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class CalibrationConfig:
  rows: int
  channels: int
  block_rows: int = 64

  @property
  def grid(self) -> tuple[int]:
    return (self.rows // self.block_rows,)


def _colmax_kernel(x_ref, o_ref, running_max):
  step = pl.program_id(0)

  @pl.when(step == 0)
  def _init():
    running_max[...] = jnp.full(running_max.shape, -jnp.inf, running_max.dtype)

  block_max = jnp.max(x_ref[...], axis=0, keepdims=True)
  running_max[...] = jnp.maximum(running_max[...], block_max)

  @pl.when(step == pl.num_programs(0) - 1)
  def _finish():
    o_ref[...] = jnp.broadcast_to(running_max[...], o_ref.shape)


@functools.lru_cache(maxsize=None)
def make_colmax(cfg: CalibrationConfig):
  call = pl.pallas_call(
      _colmax_kernel,
      out_shape=jax.ShapeDtypeStruct((8, cfg.channels), jnp.float32),
      grid=cfg.grid,
      in_specs=[pl.BlockSpec((cfg.block_rows, cfg.channels), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, cfg.channels), lambda i: (0, 0)),
      # Running max per channel, carried across the sequential grid.
      scratch_shapes=[pltpu.SMEM((1, cfg.channels), jnp.float32)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )
  return jax.jit(lambda x: call(x)[0])


def channel_ranges(x: jax.Array) -> jax.Array:
  cfg = CalibrationConfig(rows=x.shape[0], channels=x.shape[1])
  return make_colmax(cfg)(x)


def target():
  cfg = CalibrationConfig(rows=512, channels=256)
  return make_colmax(cfg), (jax.ShapeDtypeStruct((512, 256), jnp.float32),), "tpu"


if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(0), (512, 256), jnp.float32)
  print(jnp.max(jnp.abs(channel_ranges(x) - x.max(axis=0))))
