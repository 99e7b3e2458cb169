"""Bias + tanh-GELU on Mosaic GPU, behind a `jax.named_call` launcher so profiles show `bias_gelu`.

The pre-activation is kept in f32 in shared memory while the tile (bf16) is rewritten in place.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 64
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_tanh(h):
  return 0.5 * h * (1.0 + jnp.tanh(_SQRT_2_OVER_PI * (h + 0.044715 * h * h * h)))


def _bias_gelu_body(x_ref, b_ref, o_ref, x_tile, b_tile, barrier):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)
  plgpu.copy_gmem_to_smem(x_ref.at[rows], x_tile, barrier)
  plgpu.barrier_wait(barrier)
  plgpu.copy_gmem_to_smem(b_ref, b_tile, barrier)
  plgpu.barrier_wait(barrier)

  with jax.named_scope("preactivation"):
    pre = pl.get_global(plgpu.SMEM(x_tile.shape, jnp.float32))
    pre[...] = x_tile[...].astype(jnp.float32) + b_tile[...].astype(jnp.float32)

  with jax.named_scope("activation"):
    x_tile[...] = _gelu_tanh(pre[...]).astype(x_tile.dtype)

  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(x_tile, o_ref.at[rows])
  plgpu.wait_smem_to_gmem(0)


@functools.partial(jax.named_call, name="bias_gelu")
def bias_gelu(x, bias):
  """x: (tokens, hidden) bf16; bias: (1, hidden)."""
  tokens, hidden = x.shape
  return plgpu.kernel(
      _bias_gelu_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(tokens // BLOCK_ROWS,),
      grid_names=("blocks",),
      scratch_types=[
          plgpu.SMEM((BLOCK_ROWS, hidden), x.dtype),
          plgpu.SMEM((1, hidden), bias.dtype),
          plgpu.Barrier(num_arrivals=1),
      ],
  )(x, bias)


@jax.jit
def mlp_up(x, w, bias):
  h = jnp.dot(x, w, preferred_element_type=jnp.float32).astype(jnp.bfloat16)
  return bias_gelu(h, bias)


def target():
  x = jnp.ones((256, 128), jnp.bfloat16)
  w = jnp.ones((128, 128), jnp.bfloat16)
  b = jnp.zeros((1, 128), jnp.bfloat16)
  return mlp_up, (x, w, b), "cuda"
