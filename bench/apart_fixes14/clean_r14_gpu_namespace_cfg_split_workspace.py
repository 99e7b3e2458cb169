"""Split-row sum of squares for global-norm gradient clipping (Mosaic GPU).

Config arrives as a `types.SimpleNamespace` built from the trainer's flat
config dict (the way the training loop hands settings to its ops).
Every block writes its partial vector to a workspace and raises a counter;
block 0 waits for the others and folds the partials.
"""
# fix-rate: clean

from __future__ import annotations

import functools
import types

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

RAW_CONFIG = {
    "clip_num_blocks": 4,
    "clip_block": 256,
    "clip_dtype": "bfloat16",
}


def ops_config(raw: dict) -> types.SimpleNamespace:
  return types.SimpleNamespace(**{k.removeprefix("clip_"): v for k, v in raw.items()})


def _sumsq_body(g_ref, total_ref, partials, *, cfg):
  blk = jax.lax.axis_index("blk")
  arrived = pl.get_global(plgpu.SemaphoreType.REGULAR)
  g = g_ref[pl.ds(blk * cfg.block, cfg.block)].astype(jnp.float32)
  partials[blk] = g * g

  @pl.when(blk != 0)
  def _publish():
    pl.semaphore_signal(arrived, 1)

  @pl.when(blk == 0)
  def _fold():
    pl.semaphore_wait(arrived, cfg.num_blocks - 1)
    acc = partials[0]
    for b in range(1, cfg.num_blocks):
      acc = acc + partials[b]
    total_ref[...] = acc


def build_sumsq(cfg: types.SimpleNamespace):
  return plgpu.kernel(
      functools.partial(_sumsq_body, cfg=cfg),
      out_type=(
          jax.ShapeDtypeStruct((cfg.block,), jnp.float32),
          jax.ShapeDtypeStruct((cfg.num_blocks, cfg.block), jnp.float32),
      ),
      grid=(cfg.num_blocks,),
      grid_names=("blk",),
  )


CFG = ops_config(RAW_CONFIG)


@jax.jit
def global_sumsq(grads: jax.Array) -> jax.Array:
  total, _ = build_sumsq(CFG)(grads)
  return jnp.sum(total)


def target():
  n = CFG.num_blocks * CFG.block
  return global_sumsq, (jax.ShapeDtypeStruct((n,), jnp.dtype(CFG.dtype)),), "cuda"


if __name__ == "__main__":
  g = jnp.ones((CFG.num_blocks * CFG.block,), jnp.bfloat16)
  print(jnp.sqrt(global_sumsq(g)))
