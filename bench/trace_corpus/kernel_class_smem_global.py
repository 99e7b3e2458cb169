"""A kernel class whose body allocates a shared-memory buffer with get_global: JAX rejects it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Stage:
    def __init__(self, width):
        self.width = width

    def body(self, x_ref, o_ref):
        tile = pl.get_global(plgpu.SMEM((self.width,), jnp.float32))
        tile[...] = x_ref[...]
        o_ref[...] = tile[...] * 0.5

    def run(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


if __name__ == "__main__":
    Stage(128).run(jnp.ones((128,), jnp.float32))
