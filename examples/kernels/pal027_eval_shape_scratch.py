"""PAL027: a TPU accumulator typed by jax.eval_shape and given as scratch.

A ShapeDtypeStruct describes an array but says no memory space:

    AttributeError: 'ShapeDtypeStruct' object has no attribute 'get_ref_aval'

Fix: `pltpu.VMEM(struct.shape, struct.dtype)`, where the struct is made.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((64, 128), jnp.float32)


def _partial(x):
  return jnp.sum(x.reshape(-1, 8, x.shape[-1]), axis=0)


def accumulator():
  return jax.eval_shape(_partial, X)  # wrong: no memory space


def column_sums(x_ref, o_ref, acc):
  acc[...] = _partial(x_ref[...])
  o_ref[...] = jnp.sum(acc[...], axis=0, keepdims=True)


# pallas-lsp: trace(f32[64,128])
def run(x):
  out = jax.ShapeDtypeStruct((1, 128), jnp.float32)
  return pl.pallas_call(column_sums, out_shape=out, scratch_shapes=[accumulator()],
                        compiler_params=pltpu.CompilerParams())(x)


def target():
  return run, (X,), "tpu"
