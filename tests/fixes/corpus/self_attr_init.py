"""The buffer type is a self attribute set in __init__; the body is a method."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Scaler:
    def __init__(self, n):
        self.n = n
        self.table_type = plgpu.GMEM((128,), jnp.float32)

    def body(self, x_ref, o_ref):
        table = pl.get_global(self.table_type)
        o_ref[...] = x_ref[...] * self.n + table[...]

    def build(self):
        return plgpu.kernel(self.body, out_type=X)


def target():
    return Scaler(3.0).build(), (X,), "cuda"
