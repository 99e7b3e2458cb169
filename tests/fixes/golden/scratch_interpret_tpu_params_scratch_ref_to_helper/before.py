"""Under the TPU interpreter (`interpret=pltpu.InterpretParams()`), a running total typed by a helper handed a
scratch ref (`wide_like(stage)`, which reads only `stage.shape`): the launch hands the helper that scratch type,
`pltpu.VMEM((1, width), x.dtype)`, so the total keeps the staging buffer's shape for every width.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 8


def wide_like(ref):
    return pltpu.VMEM(ref.shape, jnp.float32)


def _running_body(x_ref, o_ref, stage):
    total = pl.get_global(wide_like(stage))

    @pl.when(pl.program_id(0) == 0)
    def _start():
        total[...] = jnp.zeros(total.shape, jnp.float32)

    stage[...] = jnp.sum(x_ref[...], axis=0, keepdims=True)
    total[...] += stage[...].astype(jnp.float32)
    o_ref[...] = total[...]


def running_sums(x):
    n, width = x.shape
    return pl.pallas_call(
        _running_body,
        out_shape=jax.ShapeDtypeStruct((n // BLOCK, width), jnp.float32),
        grid=(n // BLOCK,),
        in_specs=[pl.BlockSpec((BLOCK, width), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, width), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((1, width), x.dtype)],
        interpret=pltpu.InterpretParams(),
    )(x)


def _x():
    return jnp.arange(32 * 16, dtype=jnp.float32).reshape(32, 16) % 5.0


def target():
    return running_sums, (_x(),), "interpret"


def expected():
    return np.cumsum(np.asarray(_x()).reshape(-1, BLOCK, 16).sum(axis=1), axis=0)
