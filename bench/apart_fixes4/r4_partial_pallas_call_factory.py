"""Blocked matmul for the MoE down-projection, with a per-shape tuning table.

Every TPU kernel of this module goes through `tpu_call`, a `pl.pallas_call` with the module's compiler
parameters bound; the contraction axis is the last ("arbitrary") grid axis and the f32 partial
product lives in VMEM between its steps.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

tpu_call = functools.partial(
    pl.pallas_call,
    compiler_params=pltpu.CompilerParams(
        dimension_semantics=("parallel", "parallel", "arbitrary"),
        vmem_limit_bytes=64 * 1024 * 1024,
    ),
)


class Blocks(NamedTuple):
  bm: int
  bk: int
  bn: int


TUNED_BLOCKS = {
    (256, 512, 256): Blocks(128, 256, 128),
    (1024, 4096, 1024): Blocks(256, 512, 256),
}
DEFAULT_BLOCKS = Blocks(128, 128, 128)


def pick_blocks(m: int, k: int, n: int) -> Blocks:
  return TUNED_BLOCKS.get((m, k, n), DEFAULT_BLOCKS)


def _matmul_kernel(x_ref, w_ref, o_ref, *, num_k: int):
  k = pl.program_id(2)
  acc_ref = pl.get_global(pltpu.VMEM(o_ref.shape, jnp.float32))

  @pl.when(k == 0)
  def _zero():
    acc_ref[...] = jnp.zeros_like(acc_ref)

  acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

  @pl.when(k == num_k - 1)
  def _store():
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def matmul(x: jax.Array, w: jax.Array, blocks: Blocks | None = None) -> jax.Array:
  m, k = x.shape
  _, n = w.shape
  blocks = blocks or pick_blocks(m, k, n)
  num_k = k // blocks.bk
  return tpu_call(
      functools.partial(_matmul_kernel, num_k=num_k),
      out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
      grid=(m // blocks.bm, n // blocks.bn, num_k),
      in_specs=[
          pl.BlockSpec((blocks.bm, blocks.bk), lambda i, j, kk: (i, kk)),
          pl.BlockSpec((blocks.bk, blocks.bn), lambda i, j, kk: (kk, j)),
      ],
      out_specs=pl.BlockSpec((blocks.bm, blocks.bn), lambda i, j, kk: (i, j)),
  )(x, w)


def target():
  x = jax.ShapeDtypeStruct((256, 512), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)
  return matmul, (x, w), "tpu"


if __name__ == "__main__":
  kx, kw = jax.random.split(jax.random.key(0))
  x = jax.random.normal(kx, (256, 512), jnp.bfloat16)
  w = jax.random.normal(kw, (512, 256), jnp.bfloat16)
  want = jnp.dot(x, w, preferred_element_type=jnp.float32).astype(jnp.bfloat16)
  print(float(jnp.max(jnp.abs(matmul(x, w).astype(jnp.float32) - want.astype(jnp.float32)))))
