"""Prompt / generation split scaling for a KV-cache write on Mosaic GPU, as a `pl.kernel` over a mesh.

Rows of the key block that belong to the prompt (`block < prompt_blocks`) are multiplied by the
prompt scale; the generated rows are multiplied by the generation scale and clamped to the fp8-safe
range before they are cast back. Both paths compute in float32 in a shared-memory staging tile of
their own. The kernel uses `pl.kernel` with a `plgpu.Mesh` (the way the package's other mesh kernels
are written), so its shared memory comes from `pl.run_scoped`.
"""

# fix-rate: kind=run_scoped meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 64
HEAD_DIM = 128
FP8_MAX = 448.0


@dataclasses.dataclass(frozen=True)
class CacheScales:
  prompt_scale: float = 1.0
  gen_scale: float = 0.5

  @property
  def staging(self):
    return plgpu.SMEM((ROWS, HEAD_DIM), jnp.float32)


def _scale_body(k_gmem, o_gmem, *, scales: CacheScales, prompt_blocks: int):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * ROWS, ROWS)

  def with_tile(tile, barrier):
    plgpu.copy_gmem_to_smem(k_gmem.at[rows], tile, barrier)
    plgpu.barrier_wait(barrier)

    @pl.when(block < prompt_blocks)
    def _prompt():
      f32 = pl.get_global(scales.staging)
      f32[...] = tile[...].astype(jnp.float32) * scales.prompt_scale
      tile[...] = f32[...].astype(tile.dtype)

    @pl.when(block >= prompt_blocks)
    def _generated():
      f32 = pl.get_global(scales.staging)
      f32[...] = tile[...].astype(jnp.float32) * scales.gen_scale
      f32[...] = jnp.minimum(jnp.maximum(f32[...], -FP8_MAX), FP8_MAX)
      tile[...] = f32[...].astype(tile.dtype)

    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, o_gmem.at[rows])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(with_tile, plgpu.SMEM((ROWS, HEAD_DIM), k_gmem.dtype), plgpu.Barrier(num_arrivals=1))


def scale_keys(keys: jax.Array, prompt_len: int, scales: CacheScales = CacheScales()) -> jax.Array:
  n, d = keys.shape
  if d != HEAD_DIM or n % ROWS or prompt_len % ROWS:
    raise ValueError(f"keys {keys.shape} / prompt_len {prompt_len} do not tile by {ROWS}x{HEAD_DIM}")
  mesh = plgpu.Mesh(grid=(n // ROWS,), grid_names=("blocks",))
  return pl.kernel(
      functools.partial(_scale_body, scales=scales, prompt_blocks=prompt_len // ROWS),
      out_type=jax.ShapeDtypeStruct(keys.shape, keys.dtype),
      mesh=mesh,
  )(keys)


def target():
  fn = jax.jit(functools.partial(scale_keys, prompt_len=4 * ROWS))
  return fn, (jax.ShapeDtypeStruct((8 * ROWS, HEAD_DIM), jnp.bfloat16),), "cuda"
