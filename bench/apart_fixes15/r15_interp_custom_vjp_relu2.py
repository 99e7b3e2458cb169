"""Squared-ReLU activation (Primer) with a custom VJP whose both passes are Pallas kernels.

The backward kernel keeps relu(x) in a VMEM block and forms 2 * relu(x) * g from it. The
research code runs the pair interpreted (`interpret=True`) until the TPU allocation comes in.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = (8, 128)
INTERPRET = True


def _spec():
  return pl.BlockSpec(BLOCK, lambda i: (i, 0))


def _fwd_body(x_ref, y_ref):
  r = jnp.maximum(x_ref[...], 0.0)
  y_ref[...] = r * r


def _bwd_body(x_ref, g_ref, dx_ref):
  relu = pl.get_global(pltpu.VMEM(BLOCK, jnp.float32))
  relu[...] = jnp.maximum(x_ref[...], 0.0)
  dx_ref[...] = 2.0 * relu[...] * g_ref[...]


def _call(body, x, *operands):
  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // BLOCK[0],),
      in_specs=[_spec()] * len(operands),
      out_specs=_spec(),
      interpret=INTERPRET,
  )(*operands)


@jax.custom_vjp
def relu_squared(x):
  return _call(_fwd_body, x, x)


def _relu_squared_fwd(x):
  return relu_squared(x), x


def _relu_squared_bwd(x, g):
  return (_call(_bwd_body, x, x, g),)


relu_squared.defvjp(_relu_squared_fwd, _relu_squared_bwd)


class PrimerFFN:
  def __init__(self, width=128):
    self.width = width

  def __call__(self, h):
    return relu_squared(h)


def loss(h):
  return jnp.sum(PrimerFFN()(h) * 0.5)


def _inputs():
  return (jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 9 - 4.0,)


def target():
  return jax.grad(loss), _inputs(), "interpret"


def expected():
  (h,) = _inputs()
  return 2.0 * jnp.maximum(h, 0.0) * 0.5


if __name__ == "__main__":
  print(jnp.array_equal(jax.grad(loss)(*_inputs()), expected()))
