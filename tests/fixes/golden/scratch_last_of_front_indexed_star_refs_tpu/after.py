"""A TPU body taking `*refs` that reads them from the front only (`refs[:n]`, `refs[n]`) asks get_global for a
VMEM accumulator: it becomes the last scratch ref, `refs[-1]` where the get_global was (no read shifts)."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def _sum_kernel(*refs, n):
  ins = refs[:n]
  o_ref = refs[n]
  acc = refs[-1]
  acc[...] = jnp.zeros_like(acc)
  for ref in ins:
    acc[...] += ref[...]
  o_ref[...] = acc[...]


def target():
  kernel = pl.pallas_call(
    functools.partial(_sum_kernel, n=2),
    out_shape=X,
    scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)],
  )
  return kernel, (X, X), "tpu"
