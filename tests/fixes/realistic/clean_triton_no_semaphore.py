"""Clean: a Triton pallas_call from a factory with a tuning table; no semaphore at all."""
# fix-rate: clean
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BLOCK = {"small": 32, "large": 64}


def make(size="small"):
    block = BLOCK[size]

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((128,), jnp.float32), grid=(128 // block,),
                          in_specs=[pl.BlockSpec((block,), lambda i: (i,))],
                          out_specs=pl.BlockSpec((block,), lambda i: (i,)))


def target():
    return make(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "triton"
