"""A *args launch wrapper in interpret mode, called from __main__ with several shapes."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _axpy(a_ref, x_ref, y_ref, o_ref):
    o_ref[...] = a_ref[0] * x_ref[...] + y_ref[...]


def launch(body, *operands, interpret=True):
    out = jax.ShapeDtypeStruct(operands[-1].shape, operands[-1].dtype)
    return pl.pallas_call(body, out_shape=out, interpret=interpret)(*operands)


axpy = functools.partial(launch, _axpy)


if __name__ == "__main__":
    for n in (128, 1024):
        axpy(jnp.array([2.0], jnp.float32), jnp.ones((n,), jnp.float32), jnp.zeros((n,), jnp.float32))
