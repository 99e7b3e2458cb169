"""A method body of a Triton pallas_call reads a global array."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Biased:
    def body(self, x_ref, o_ref):
        bias = pl.get_global(plgpu.GMEM((128,), jnp.float32))
        o_ref[...] = x_ref[...] + bias[...]

    def run(self, x):
        return pl.pallas_call(self.body, out_shape=X, in_specs=[pl.BlockSpec((128,), lambda: (0,))])(x)


def target():
    return Biased().run, (X,), "triton"
