"""An SMEM type held by an enum.Enum member, read through a property of the Enum: it joins the launch's
scratch_types as written there, `Buffers.STAGE.type`.

(Before: no finding; an Enum member's value was not followed.)
"""
import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


class Buffers(enum.Enum):
    STAGE = plgpu.SMEM((128,), jnp.float32)
    GATE = plgpu.SMEM((256,), jnp.float32)

    @property
    def type(self):
        return self.value


def body(x_ref, o_ref, gate):
    stage = pl.get_global(Buffers.STAGE.type)
    stage[...] = x_ref[...]
    gate[pl.ds(0, 128)] = stage[...] * 2.0
    o_ref[...] = gate[pl.ds(0, 128)]


def target():
    return plgpu.kernel(body, out_type=X, scratch_types=[Buffers.GATE.type]), (X,), "cuda"
