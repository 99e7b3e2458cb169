"""Layer norm over the hidden axis, one block of rows per grid step (TPU).

``y = (x - mean) * rsqrt(var + eps) * gamma + beta``. The input is staged in f32 (bf16
activations are common) in a buffer whose type comes from ``r9_ln_buffers``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import r9_ln_buffers as buffers

# fix-rate: kind=vmem_type meaning=preserving

EPS = 1e-6


def _layer_norm_body(x_ref, g_ref, b_ref, o_ref, xf_ref):
  xf_ref[...] = x_ref[...].astype(jnp.float32)
  x = xf_ref[...]
  mean = jnp.mean(x, axis=-1, keepdims=True)
  centred = x - mean
  var = jnp.mean(centred * centred, axis=-1, keepdims=True)
  y = centred * jax.lax.rsqrt(var + EPS)
  o_ref[...] = (y * g_ref[...] + b_ref[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("block_rows",))
def layer_norm(x, gamma, beta, *, block_rows: int = 128):
  rows, hidden = x.shape
  row_spec = pl.BlockSpec((block_rows, hidden), lambda i: (i, 0))
  param_spec = pl.BlockSpec((1, hidden), lambda i: (0, 0))
  return pl.pallas_call(
      _layer_norm_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // block_rows,),
      in_specs=[row_spec, param_spec, param_spec],
      out_specs=row_spec,
      scratch_shapes=[buffers.staging_buffer(block_rows, hidden)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
  )(x, gamma.reshape(1, hidden), beta.reshape(1, hidden))


def target():
  x = jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)
  p = jax.ShapeDtypeStruct((256,), jnp.bfloat16)
  return layer_norm, (x, p, p), "tpu"


def layer_norm_reference(x, gamma, beta):
  xf = x.astype(jnp.float32)
  mean = jnp.mean(xf, axis=-1, keepdims=True)
  var = jnp.mean((xf - mean) ** 2, axis=-1, keepdims=True)
  y = (xf - mean) * jax.lax.rsqrt(var + EPS)
  return (y * gamma.astype(jnp.float32) + beta.astype(jnp.float32)).astype(x.dtype)


def pick_block_rows(rows: int, hidden: int) -> int:
  """The largest power-of-two row block that divides ``rows`` and fits the staging budget."""
  block = 512
  while block > 8:
    if rows % block == 0 and block * hidden * 4 <= buffers.MAX_STAGING_BYTES:
      return block
    block //= 2
  return 8


def layer_norm_auto(x, gamma, beta):
  return layer_norm(x, gamma, beta, block_rows=pick_block_rows(*x.shape))


if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(0), (512, 256), jnp.bfloat16)
  gamma = jnp.ones((256,), jnp.bfloat16)
  beta = jnp.zeros((256,), jnp.bfloat16)
  got = layer_norm_auto(x, gamma, beta).astype(jnp.float32)
  want = layer_norm_reference(x, gamma, beta).astype(jnp.float32)
  print("max error:", float(jnp.max(jnp.abs(got - want))))
