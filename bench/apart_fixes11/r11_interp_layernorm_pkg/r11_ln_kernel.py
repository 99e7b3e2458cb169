"""Row layernorm without affine parameters (the affine part is fused into the next matmul)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import r11_ln_buffers as buffers


def _layernorm_body(x_ref, o_ref):
  centered = pl.get_global(buffers.CENTERED)
  x = x_ref[...].astype(jnp.float32)
  mean = jnp.mean(x, axis=-1, keepdims=True)
  centered[...] = x - mean
  var = jnp.mean(centered[...] * centered[...], axis=-1, keepdims=True)
  o_ref[...] = (centered[...] * jax.lax.rsqrt(var + buffers.EPS)).astype(o_ref.dtype)


def layernorm(x, *, interpret=False):
  rows, width = x.shape
  block = (buffers.ROWS, width)
  return pl.pallas_call(
      _layernorm_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // buffers.ROWS,),
      in_specs=[pl.BlockSpec(block, lambda i: (i, 0))],
      out_specs=pl.BlockSpec(block, lambda i: (i, 0)),
      interpret=interpret,
  )(x)
