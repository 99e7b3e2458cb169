"""Mean pooling over groups of `POOL` consecutive rows."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from ._buffers import scratch as _scratch

POOL = 8


def _mean_pool_kernel(x_ref, o_ref):
  total = _scratch((1, x_ref.shape[-1]))
  total[...] = jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)
  o_ref[...] = (total[...] * (1.0 / POOL)).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("interpret",))
def mean_pool_rows(x, interpret=False):
  m, d = x.shape
  return pl.pallas_call(
      _mean_pool_kernel,
      out_shape=jax.ShapeDtypeStruct((m // POOL, d), x.dtype),
      grid=(m // POOL,),
      in_specs=[pl.BlockSpec((POOL, d), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, d), lambda i: (i, 0)),
      interpret=interpret,
  )(x)
