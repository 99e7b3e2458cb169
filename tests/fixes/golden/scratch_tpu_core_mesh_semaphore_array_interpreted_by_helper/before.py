"""Double-buffered scaling on a TPU core mesh, run by the TPU interpreter where no TPU is found."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Plan:
    rows: int = 8
    cols: int = 128
    depth: int = 2


def pick_interpreter():
    if jax.default_backend() == "tpu":
        return False
    return pltpu.InterpretParams()


def scale_body(x_hbm, o_hbm, slots, *, plan, chunks):
    sems = pl.get_global(pltpu.SemaphoreType.DMA((plan.depth,)))

    def fetch(i):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * plan.rows, plan.rows)], slots.at[i % plan.depth],
                                     sems.at[i % plan.depth])

    fetch(0).start()

    @pl.loop(0, chunks)
    def _chunk(i):
        @pl.when(i + 1 < chunks)
        def _next():
            fetch(i + 1).start()

        fetch(i).wait()
        slot = i % plan.depth
        slots[slot] = slots[slot] * 3.0
        out = pltpu.make_async_copy(slots.at[slot], o_hbm.at[pl.ds(i * plan.rows, plan.rows)], sems.at[slot])
        out.start()
        out.wait()


def scale(x, plan=Plan()):
    return pl.kernel(
        functools.partial(scale_body, plan=plan, chunks=x.shape[0] // plan.rows),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.create_tensorcore_mesh("core", num_cores=1),
        scratch_types=[pltpu.VMEM((plan.depth, plan.rows, plan.cols), x.dtype)],
        interpret=pick_interpreter(),
    )(x)


X = np.arange(32 * 128, dtype=np.float32).reshape(32, 128) % 7


def target():
    return jax.jit(scale), (jnp.asarray(X),), "interpret"


def expected():
    return X * 3.0
