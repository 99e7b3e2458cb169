"""A table of semaphore kinds keyed by an `enum.Enum` member, each entry a frozen dataclass, shared by a TPU op
and a Mosaic GPU op: the GPU kernel's `get_global(KINDS[Platform.CUDA].done)` reads a BARRIER semaphore. The
get_global asks for plgpu.SemaphoreType.REGULAR itself; the table keeps what its other readers need.

(Before, the table lookup by an enum member was not followed: no finding, where jax 0.12 says 'get_global only
supports semaphores, got Ref<gmem>{barrier_semaphore[]}'.)
"""
import dataclasses
import enum

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


class Platform(enum.Enum):
    TPU = enum.auto()
    CUDA = enum.auto()


@dataclasses.dataclass(frozen=True)
class Kinds:
    copy: object
    done: object


KINDS = {
    Platform.TPU: Kinds(copy=pltpu.SemaphoreType.DMA, done=pltpu.SemaphoreType.REGULAR),
    Platform.CUDA: Kinds(copy=plgpu.Barrier(), done=plgpu.SemaphoreType.BARRIER),
}


def _body(x_ref, o_ref):
    done = pl.get_global(KINDS[Platform.CUDA].done)
    o_ref[...] = x_ref[...] + 1.0

    @pl.when(jax.lax.axis_index("b") != 0)
    def _():
        pl.semaphore_signal(done, 1)

    @pl.when(jax.lax.axis_index("b") == 0)
    def _():
        pl.semaphore_wait(done, 3)


def bump(x):
    return plgpu.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,), grid_names=("b",))(x)


def target():
    return bump, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
