"""Column-block sum with `plgpu.emit_pipeline`: sums the column blocks of x into one (bm, bn) tile.

The pipeline streams (bm, bn) blocks of x through shared memory; the running sum lives in a
shared-memory accumulator whose type comes from the `Workspace` dataclass (a
`dataclasses.field(default_factory=...)`, so every `Workspace()` gets its own).
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BM, BN = 64, 128


@dataclasses.dataclass
class Workspace:
  accumulator: plgpu.SMEM = dataclasses.field(
      default_factory=lambda: plgpu.SMEM((BM, BN), jnp.float32))
  max_concurrent_steps: int = 2


def _column_block_sum_kernel(ws: Workspace, x_gmem, out_gmem):
  acc = pl.get_global(ws.accumulator)
  acc[...] = jnp.zeros((BM, BN), jnp.float32)

  def step(_, x_smem):
    acc[...] = acc[...] + x_smem[...]

  plgpu.emit_pipeline(
      step,
      grid=(x_gmem.shape[1] // BN,),
      in_specs=[plgpu.BlockSpec((BM, BN), lambda j: (0, j))],
      max_concurrent_steps=ws.max_concurrent_steps,
  )(x_gmem)

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(acc, out_gmem)
  plgpu.wait_smem_to_gmem(0)


def column_block_sum(x: jax.Array, ws: Workspace | None = None) -> jax.Array:
  ws = ws or Workspace()
  rows, cols = x.shape
  if rows != BM or cols % BN:
    raise ValueError(f"expected ({BM}, k*{BN}), got {x.shape}")
  return plgpu.kernel(
      functools.partial(_column_block_sum_kernel, ws),
      out_type=jax.ShapeDtypeStruct((BM, BN), jnp.float32),
  )(x)


def column_block_sum_reference(x):
  return x.reshape(BM, -1, BN).sum(axis=1)


def target():
  return column_block_sum, (jax.ShapeDtypeStruct((BM, 8 * BN), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(0), (BM, 8 * BN), jnp.float32)
  got = jax.jit(column_block_sum)(x)
  print(jnp.max(jnp.abs(got - column_block_sum_reference(x))))
