"""Two SMEM buffers asked for by a dict comprehension of get_globals over a dict of types on `self`: the dict
itself becomes scratch_types (plgpu.kernel allocates a dict of scratch as keyword arguments), and the body
takes them as `**bufs`, each a buffer of its own as before.

(Before: no finding; then a fix that gave every item the same one scratch buffer.)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class PingPong:
    def __init__(self, width):
        self.width = width
        self.smem = {"ping": plgpu.SMEM((width,), jnp.float32), "pong": plgpu.SMEM((width,), jnp.float32)}

    def _body(self, x_ref, o_ref):
        bufs = {name: pl.get_global(kind) for name, kind in self.smem.items()}
        bufs["ping"][...] = x_ref[...]
        bufs["pong"][...] = bufs["ping"][...] * 2.0
        o_ref[...] = bufs["pong"][...] + bufs["ping"][...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct((self.width,), jnp.float32))(x)


def target():
    return PingPong(128), (X,), "cuda"
