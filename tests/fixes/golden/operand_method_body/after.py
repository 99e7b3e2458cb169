"""The buffer type is a self attribute set in __init__; the body is a method."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Scaler:
    def __init__(self, n):
        self.n = n
        self.table_type = plgpu.GMEM((128,), jnp.float32)

    def body(self, table, x_ref, o_ref):
        o_ref[...] = x_ref[...] * self.n + table[...]

    def build(self):
        return functools.partial(
            plgpu.kernel(self.body, out_type=X),
            jnp.zeros(self.table_type.shape, self.table_type.dtype),
        )


def target():
    return Scaler(3.0).build(), (X,), "cuda"
