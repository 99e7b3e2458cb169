import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Stages:
    rows: int = 8

    def types(self):
        return [pltpu.VMEM((self.rows, 128), jnp.float32), pltpu.VMEM((self.rows, 128), jnp.float32)]


STAGES = Stages()


def smooth_kernel(x_ref, o_ref, *stage):
    stage[0][...] = x_ref[...] * 0.5
    stage[1][...] = stage[0][...] + 1.0
    o_ref[...] = stage[1][...]


def smooth(x):
    return pl.pallas_call(
        smooth_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
        scratch_shapes=STAGES.types(),
    )(x)


def target():
    return smooth, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
