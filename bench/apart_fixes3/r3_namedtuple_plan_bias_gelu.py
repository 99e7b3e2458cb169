"""Bias + tanh-GELU epilogue for an MLP up-projection (Mosaic GPU, sm90).

The launch geometry is planned once per (rows, width) into a `KernelPlan` NamedTuple; the
kernel body reads everything it needs off the plan, buffer types included.
"""
# fix-rate: kind=scratch meaning=preserving

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

_SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))


class KernelPlan(NamedTuple):
  block_rows: int
  width: int
  grid: tuple[int, ...]
  out_tile: plgpu.SMEM
  load_barrier: plgpu.Barrier


# Rows per CTA, by width: wider rows get fewer rows so the tile stays under ~128 KiB.
_BLOCK_ROWS = {128: 128, 256: 128, 512: 64, 1024: 32}


def make_plan(rows: int, width: int, dtype=jnp.float32) -> KernelPlan:
  block_rows = _BLOCK_ROWS.get(width, 32)
  if rows % block_rows:
    raise ValueError(f"{rows=} must be a multiple of {block_rows=}")
  return KernelPlan(
      block_rows=block_rows,
      width=width,
      grid=(rows // block_rows,),
      out_tile=plgpu.SMEM((block_rows, width), dtype),
      load_barrier=plgpu.Barrier(num_arrivals=1),
  )


def _gelu_tanh(x):
  inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
  return 0.5 * x * (1.0 + jnp.tanh(inner))


def _bias_gelu_kernel(plan: KernelPlan, h_gmem, bias_gmem, out_gmem, load_barrier):
  block = jax.lax.axis_index("m")
  rows = pl.ds(block * plan.block_rows, plan.block_rows)
  tile = pl.get_global(plan.out_tile)

  plgpu.copy_gmem_to_smem(h_gmem.at[rows], tile, load_barrier)
  plgpu.barrier_wait(load_barrier)
  tile[...] = _gelu_tanh(tile[...] + bias_gmem[...])

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, out_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


def bias_gelu(h: jax.Array, bias: jax.Array) -> jax.Array:
  rows, width = h.shape
  plan = make_plan(rows, width, h.dtype)
  launch = plgpu.kernel(
      lambda *refs: _bias_gelu_kernel(plan, *refs),
      out_type=jax.ShapeDtypeStruct(h.shape, h.dtype),
      grid=plan.grid,
      grid_names=("m",),
      scratch_types=[plan.load_barrier],
  )
  return launch(h, bias.reshape(1, width))


def bias_gelu_reference(h, bias):
  return _gelu_tanh(h + bias[None, :])


def target():
  args = (jax.ShapeDtypeStruct((1024, 256), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.float32))
  return bias_gelu, args, "cuda"


if __name__ == "__main__":
  key_h, key_b = jax.random.split(jax.random.key(1))
  h = jax.random.normal(key_h, (1024, 256), jnp.float32)
  b = jax.random.normal(key_b, (256,), jnp.float32)
  got = jax.jit(bias_gelu)(h, b)
  np.testing.assert_allclose(got, bias_gelu_reference(h, b), rtol=2e-5, atol=2e-5)
  print("ok")
