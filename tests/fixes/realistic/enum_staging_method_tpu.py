"""A TPU running-sum kernel whose buffers are members of an Enum that knows its own type; the accumulator is
taken inside the body through the member's `take()` method."""
# fix-rate: kind=scratch meaning=preserving
import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = (16, 128)


class Staging(enum.Enum):
    RUNNING = "running"
    SQUARES = "squares"

    def buffer_type(self):
        if self is Staging.RUNNING:
            return pltpu.VMEM(TILE, jnp.float32)
        return pltpu.VMEM((TILE[0], 1), jnp.float32)

    def take(self):
        return pl.get_global(self.buffer_type())


def running_sum_kernel(x_ref, o_ref):
    running = Staging.RUNNING.take()

    @pl.when(pl.program_id(0) == 0)
    def _():
        running[...] = jnp.zeros_like(running)

    running[...] += x_ref[...]
    o_ref[...] = running[...]


def running_sum(x):
    spec = pl.BlockSpec(TILE, lambda i: (i, 0))
    return pl.pallas_call(
        running_sum_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // TILE[0],),
        in_specs=[spec],
        out_specs=spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(x)


def target():
    return running_sum, (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "tpu"
