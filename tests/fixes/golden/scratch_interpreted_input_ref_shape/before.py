"""An SMEM buffer shaped like an input ref (`plgpu.SMEM(x_ref.shape, x_ref.dtype)`) in a kernel the launcher's
`interpret=` keyword may interpret: the launch allocates it with its operand's shape and dtype (`x.shape`).

(Before: a finding without a fix; the ref's shape was not written at the launch.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref):
    buf = pl.get_global(plgpu.SMEM(x_ref.shape, x_ref.dtype))
    buf[...] = x_ref[...] * 4.0
    o_ref[...] = buf[...]


def quadrupled(x, *, interpret=False):
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=interpret)(x)


def target():
    return functools.partial(quadrupled, interpret=True), (jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128),), "interpret"


def expected():
    return jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128) * 4.0
