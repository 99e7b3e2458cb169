"""LayerScale (`y = x * gamma`) with a Pallas TPU backward pass, checked on CPU in interpret mode.

The forward is a plain elementwise kernel. The backward kernel returns `dx = g * gamma` per row block
and accumulates `dgamma = sum_rows(g * x)` across the (sequential) row-block grid.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8
INTERPRET = True  # CI has no TPU


def _fwd_kernel(x_ref, gamma_ref, y_ref):
  y_ref[...] = x_ref[...] * gamma_ref[...]


def _bwd_kernel(x_ref, gamma_ref, g_ref, dx_ref, dgamma_ref):
  i = pl.program_id(0)
  acc = pl.get_global(pltpu.VMEM(dgamma_ref.shape, jnp.float32))

  @pl.when(i == 0)
  def _zero():
    acc[...] = jnp.zeros_like(acc)

  dx_ref[...] = g_ref[...] * gamma_ref[...]
  acc[...] += jnp.sum(g_ref[...] * x_ref[...], axis=0, keepdims=True).astype(jnp.float32)

  @pl.when(i == pl.num_programs(0) - 1)
  def _emit():
    dgamma_ref[...] = acc[...].astype(dgamma_ref.dtype)


def _row_spec(cols):
  return pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))


def _vec_spec(cols):
  return pl.BlockSpec((1, cols), lambda i: (0, 0))


def _call(kernel, out_shape, x, *args, specs):
  rows, cols = x.shape
  return pl.pallas_call(
      kernel,
      out_shape=out_shape,
      grid=(rows // BLOCK_ROWS,),
      in_specs=[spec(cols) for spec in specs[0]],
      out_specs=[spec(cols) for spec in specs[1]],
      interpret=INTERPRET,
  )(x, *args)


@jax.custom_vjp
def layer_scale(x, gamma):
  (y,) = _call(_fwd_kernel, [jax.ShapeDtypeStruct(x.shape, x.dtype)], x, gamma,
               specs=([_row_spec, _vec_spec], [_row_spec]))
  return y


def _layer_scale_fwd(x, gamma):
  return layer_scale(x, gamma), (x, gamma)


def _layer_scale_bwd(res, g):
  x, gamma = res
  outs = [jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(gamma.shape, gamma.dtype)]
  dx, dgamma = _call(_bwd_kernel, outs, x, gamma, g,
                     specs=([_row_spec, _vec_spec, _row_spec], [_row_spec, _vec_spec]))
  return dx, dgamma


layer_scale.defvjp(_layer_scale_fwd, _layer_scale_bwd)


def _loss(x, gamma):
  return jnp.sum(layer_scale(x, gamma) * 3.0)


def _inputs(rows=32, cols=128):
  x = (jnp.arange(rows * cols, dtype=jnp.float32).reshape(rows, cols) % 5) - 2
  gamma = jnp.full((1, cols), 0.5, jnp.float32)
  return x, gamma


def expected():
  x, _ = (np.asarray(a) for a in _inputs())
  return (3.0 * x).sum(axis=0, keepdims=True)


def target():
  return jax.grad(_loss, argnums=1), _inputs(), "interpret"
