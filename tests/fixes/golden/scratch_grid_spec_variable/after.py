"""A TPU kernel class whose launch takes `grid_spec=spec`, a pl.GridSpec built just before it (and read by
nothing else) with an accumulator already in its scratch_shapes: the semaphore joins that tuple.

(A fix once added `scratch_shapes=` to the pallas_call: jax 0.12 'ValueError: If `grid_spec` is specified,
then `scratch_shapes` must be `()`'.)
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ReduceConfig:
    rows: int = 8
    width: int = 128


class RowReduce:
    def __init__(self, config: ReduceConfig):
        self.config = config

    def _kernel(self, x_ref, o_ref, acc_ref, done):
        acc_ref[...] = x_ref[...] * 2.0
        pl.semaphore_signal(done)
        pl.semaphore_wait(done)
        o_ref[...] = acc_ref[...]

    def __call__(self, x):
        cfg = self.config
        spec = pl.GridSpec(
            grid=(1,),
            in_specs=[pl.BlockSpec((cfg.rows, cfg.width), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((cfg.rows, cfg.width), lambda i: (i, 0)),
            scratch_shapes=(
                pltpu.VMEM((cfg.rows, cfg.width), jnp.float32),
                pltpu.SemaphoreType.REGULAR,
            ),
        )
        return pl.pallas_call(
            self._kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid_spec=spec,
        )(x)


def target():
    x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    return RowReduce(ReduceConfig()), (x,), "tpu"
