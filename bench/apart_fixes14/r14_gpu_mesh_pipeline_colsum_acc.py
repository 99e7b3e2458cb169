"""Column sums of a (K, N) activation slab via `plgpu.emit_pipeline`, one CTA per column tile.

Written against `pl.kernel` with a `plgpu.Mesh` (the launch form the rest of
the op library uses); the K-steps stream through SMEM and add into an f32
accumulator.
"""
# fix-rate: kind=run_scoped meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class ColsumTiling:
  k_block: int = 8
  n_block: int = 128
  max_concurrent_steps: int = 2


TILINGS = {
    jnp.dtype(jnp.bfloat16): ColsumTiling(),
    jnp.dtype(jnp.float32): ColsumTiling(k_block=4),
}


def _colsum_kernel(x_gmem, o_gmem, *, tiling: ColsumTiling, k_steps: int):
  col = jax.lax.axis_index("cols")
  acc = pl.get_global(plgpu.SMEM((tiling.k_block, tiling.n_block), jnp.float32))
  acc[...] = jnp.zeros_like(acc)

  def step(_, x_smem):
    acc[...] += x_smem[...].astype(jnp.float32)

  pipeline = plgpu.emit_pipeline(
      step,
      grid=(k_steps,),
      in_specs=[pl.BlockSpec((tiling.k_block, tiling.n_block), lambda k: (k, col))],
      max_concurrent_steps=tiling.max_concurrent_steps,
  )
  pipeline(x_gmem)
  o_gmem[:, pl.ds(col * tiling.n_block, tiling.n_block)] = acc[...]


def column_sums(x: jax.Array) -> jax.Array:
  k, n = x.shape
  tiling = TILINGS[x.dtype]
  partial = pl.kernel(
      functools.partial(_colsum_kernel, tiling=tiling, k_steps=k // tiling.k_block),
      out_type=jax.ShapeDtypeStruct((tiling.k_block, n), jnp.float32),
      mesh=plgpu.Mesh(grid=(n // tiling.n_block,), grid_names=("cols",)),
  )(x)
  return partial.sum(axis=0)


def target():
  return jax.jit(column_sums), (jax.ShapeDtypeStruct((64, 256), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((64, 256), jnp.bfloat16)
  print(jax.jit(column_sums)(x)[:4])
