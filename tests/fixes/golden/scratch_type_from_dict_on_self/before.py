"""A kernel class holding its buffer types in a dict on self (`self.types["acc"]`, built from its config), launched
for two configurations: the scratch is `self.types["acc"]` at the launch, not one configuration's type.
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BUFFERS = {
    "stage": lambda rows: plgpu.SMEM((rows, 128), jnp.float32),
}


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int = 128

    def staging(self):
        return plgpu.SMEM((self.rows, 128), jnp.float32)


class Copy:
    def __init__(self, cfg: Config = Config()):
        self.cfg = cfg
        self.types = {"acc": plgpu.SMEM((cfg.rows, 128), jnp.float32)}

    def _body(self, x_ref, o_ref):
        acc = pl.get_global(self.types["acc"])
        acc[...] = x_ref[...]
        o_ref[...] = acc[...]

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
    small = Config(rows=64)

    def both(x, y):
        return Copy()(x), Copy(small)(y)

    return both, (jax.ShapeDtypeStruct((128, 128), jnp.float32), jax.ShapeDtypeStruct((64, 128), jnp.float32)), "cuda"
