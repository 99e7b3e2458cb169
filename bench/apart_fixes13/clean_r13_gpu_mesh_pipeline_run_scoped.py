"""Micro-batch gradient fold for Mosaic GPU: sums `m` micro-batch slices of a flat gradient.

One CTA per column tile (`pl.kernel` over a `plgpu.Mesh`); inside, `plgpu.emit_pipeline`
streams the micro-batch rows of that tile through SMEM and folds them into an f32 running
sum, which a `FoldStat` registry says how to allocate.
"""

# fix-rate: clean

import dataclasses
import enum
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class FoldStat(enum.Enum):
  SUM = "sum"
  SUM_SQ = "sum_sq"


@dataclasses.dataclass(frozen=True)
class FoldConfig:
  tile: int = 128
  max_concurrent_steps: int = 2
  stat: FoldStat = FoldStat.SUM


def _running_stat(cfg: FoldConfig):
  """The f32 running statistic of one column tile."""
  return plgpu.SMEM((1, cfg.tile), jnp.float32)


def _fold_kernel(cfg: FoldConfig, micro: int, g_ref, o_ref):
  pl.run_scoped(functools.partial(_fold_tile, cfg, micro, g_ref, o_ref), _running_stat(cfg))


def _fold_tile(cfg: FoldConfig, micro: int, g_ref, o_ref, acc):
  j = lax.axis_index("tiles")
  cols = pl.ds(j * cfg.tile, cfg.tile)
  acc[...] = jnp.zeros_like(acc)

  def step(_, g_smem):
    v = g_smem[...].astype(jnp.float32)
    acc[...] += v * v if cfg.stat is FoldStat.SUM_SQ else v

  pipeline = plgpu.emit_pipeline(
      step,
      grid=(micro,),
      in_specs=[pl.BlockSpec((1, cfg.tile), lambda m: (m, 0))],
      max_concurrent_steps=cfg.max_concurrent_steps,
  )
  pipeline(g_ref.at[:, cols])
  o_ref[:, cols] = acc[...].astype(o_ref.dtype)


def fold_microbatches(grads: jax.Array, cfg: FoldConfig = FoldConfig()) -> jax.Array:
  micro, n = grads.shape
  mesh = plgpu.Mesh(grid=(n // cfg.tile,), grid_names=("tiles",))
  kernel = pl.kernel(
      functools.partial(_fold_kernel, cfg, micro),
      out_type=jax.ShapeDtypeStruct((1, n), jnp.float32),
      mesh=mesh,
  )
  return kernel(grads)[0]


@jax.jit
def fold_and_scale(grads):
  return fold_microbatches(grads) / grads.shape[0]


def target():
  return fold_and_scale, (jax.ShapeDtypeStruct((8, 1024), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  print(fold_and_scale(jnp.ones((8, 1024), jnp.bfloat16))[:4])
