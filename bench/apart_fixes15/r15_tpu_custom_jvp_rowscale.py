"""Row-wise RMS scaling with a custom JVP, both primal and tangent rules as TPU kernels.

Used by the research optimiser, which needs forward-mode derivatives (`jax.jvp`) of the
normalised update. The tangent kernel keeps the per-row dot product <x, dx> in a small
VMEM buffer before forming the tangent.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 128
EPS = 1e-6


def _row_spec(width):
  return pl.BlockSpec((BLOCK_ROWS, width), lambda i: (i, 0))


def _primal_body(x_ref, o_ref):
  x = x_ref[...]
  inv = jax.lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) + EPS)
  o_ref[...] = x * inv


def _tangent_body(x_ref, dx_ref, dy_ref):
  x, dx = x_ref[...], dx_ref[...]
  n = x.shape[1]
  dots = pl.get_global(pltpu.VMEM((BLOCK_ROWS, 1), jnp.float32))
  dots[...] = jnp.sum(x * dx, axis=1, keepdims=True)
  inv = jax.lax.rsqrt(jnp.mean(x * x, axis=1, keepdims=True) + EPS)
  dy_ref[...] = dx * inv - x * (inv * inv * inv) * dots[...] / n


def _launch(body, out_like, *operands):
  rows, width = out_like.shape
  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(out_like.shape, out_like.dtype),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[_row_spec(width)] * len(operands),
      out_specs=_row_spec(width),
  )(*operands)


@jax.custom_jvp
def rms_scale(x):
  return _launch(_primal_body, x, x)


@rms_scale.defjvp
def _rms_scale_jvp(primals, tangents):
  (x,), (dx,) = primals, tangents
  return rms_scale(x), _launch(_tangent_body, x, x, dx)


def update_direction(params, direction):
  return jax.jvp(rms_scale, (params,), (direction,))


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return update_direction, (spec, spec), "tpu"


if __name__ == "__main__":
  x = jnp.ones((256, 128))
  print(update_direction(x, x)[1].sum())
