"""Row-block sum of squares on TPU, reducing each block in sublane chunks with `lax.fori_loop`.

A (block_rows, 128) block is reduced 8 sublanes at a time into an (8, 128) float32 accumulator, then
the accumulator is folded into the block's output row.  Chunking keeps the live vreg count at one
accumulator and one chunk, which matters for the bf16 path where a whole block would spill.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving

SUBLANES, LANES = 8, 128


def _add_chunk(x_ref, acc_ref, chunk):
  rows = pl.ds(pl.multiple_of(chunk * SUBLANES, SUBLANES), SUBLANES)
  v = x_ref[rows, :].astype(jnp.float32)
  acc_ref[...] += v * v


def _sumsq_kernel(x_ref, o_ref, *, chunks: int):
  acc_ref = pl.get_global(pltpu.VMEM((SUBLANES, LANES), jnp.float32))
  acc_ref[...] = jnp.zeros_like(acc_ref)

  def body(chunk, carry):
    _add_chunk(x_ref, acc_ref, chunk)
    return carry

  jax.lax.fori_loop(0, chunks, body, 0)
  o_ref[...] = jnp.broadcast_to(acc_ref[...].sum(axis=0, keepdims=True), o_ref.shape)


@functools.partial(jax.jit, static_argnames=("block_rows",))
def block_sumsq(x: jax.Array, block_rows: int = 64) -> jax.Array:
  rows, lanes = x.shape
  if lanes != LANES or rows % block_rows or block_rows % SUBLANES:
    raise ValueError(f"{x.shape} does not tile into ({block_rows}, {LANES}) blocks")
  num_blocks = rows // block_rows
  out = pl.pallas_call(
      functools.partial(_sumsq_kernel, chunks=block_rows // SUBLANES),
      out_shape=jax.ShapeDtypeStruct((num_blocks * SUBLANES, LANES), jnp.float32),
      grid=(num_blocks,),
      in_specs=[pl.BlockSpec((block_rows, LANES), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((SUBLANES, LANES), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
  )(x)
  return out[::SUBLANES]


def target():
  return block_sumsq, (jax.ShapeDtypeStruct((512, 128), jnp.bfloat16),), "tpu"


if __name__ == "__main__":
  x = jnp.ones((512, 128), jnp.bfloat16)
  print(block_sumsq(x)[:, :2])
