import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class Buffers:
    @staticmethod
    def acc(rows):
        return pltpu.VMEM((rows, 128), jnp.float32)


def body(x_ref, o_ref, acc_ref):
    acc_ref[...] = x_ref[...] + 1.0
    o_ref[...] = acc_ref[...]


def run(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltpu.CompilerParams(),
                          scratch_shapes=[Buffers.acc(8)])(x)


def target():
    return run, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
