"""Global abs-max of an activation on TPU, the first pass of per-tensor fp8 quantisation.

The grid walks row blocks sequentially ("arbitrary"); a scalar running maximum is carried across
steps in scalar memory and broadcast into the (8, 128) output tile on the last step.  Block rows are
derived from the dtype's packing: a 32-bit vreg holds 8 sublanes of f32 and 16 of bf16, so the rows
per block scale with `4 // itemsize`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving

LANES = 128
VREGS_PER_BLOCK = 8


def rows_per_block(dtype) -> int:
  packing = 4 // jnp.dtype(dtype).itemsize
  return 8 * packing * VREGS_PER_BLOCK


def _absmax_kernel(x_ref, o_ref, *, num_steps: int):
  running = pl.get_global(pltpu.SMEM((1,), jnp.float32))
  step = pl.program_id(0)

  @pl.when(step == 0)
  def _reset():
    running[0] = 0.0

  block_max = jnp.max(jnp.abs(x_ref[...].astype(jnp.float32)))
  running[0] = jnp.maximum(running[0], block_max)

  @pl.when(step == num_steps - 1)
  def _emit():
    o_ref[...] = jnp.full(o_ref.shape, running[0], o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("interpret",))
def absmax(x: jax.Array, interpret: bool = False) -> jax.Array:
  rows, lanes = x.shape
  block = rows_per_block(x.dtype)
  if lanes != LANES or rows % block:
    raise ValueError(f"{x.shape} does not tile into ({block}, {LANES}) blocks")
  num_steps = rows // block
  out = pl.pallas_call(
      functools.partial(_absmax_kernel, num_steps=num_steps),
      out_shape=jax.ShapeDtypeStruct((8, LANES), jnp.float32),
      grid=(num_steps,),
      in_specs=[pl.BlockSpec((block, LANES), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, LANES), lambda i: (0, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
      interpret=interpret,
  )(x)
  return out[0, 0]


def fp8_scale(x: jax.Array) -> jax.Array:
  return absmax(x) / jnp.finfo(jnp.float8_e4m3fn).max.astype(jnp.float32)


def target():
  return absmax, (jax.ShapeDtypeStruct((1024, 128), jnp.bfloat16),), "tpu"


if __name__ == "__main__":
  x = jnp.linspace(-3, 2, 1024 * 128, dtype=jnp.float32).astype(jnp.bfloat16).reshape(1024, 128)
  print(absmax(x, interpret=jax.default_backend() != "tpu"), fp8_scale(x))
