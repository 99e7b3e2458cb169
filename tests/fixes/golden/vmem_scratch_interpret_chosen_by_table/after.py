"""Running row maxima carried across the sequential grid; the interpreter is chosen by a table of backends."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS = 8
_INTERPRET_ON = {"tpu": False, "cpu": True, "gpu": True}


def _running_max_body(x_ref, o_ref, best_ref):

    @pl.when(pl.program_id(0) == 0)
    def _start():
        best_ref[...] = jnp.full(best_ref.shape, -jnp.inf, jnp.float32)

    best_ref[...] = jnp.maximum(
        best_ref[...], jnp.max(x_ref[...], axis=0, keepdims=True)
    )
    o_ref[...] = best_ref[...]


def running_max(x):
    rows, cols = x.shape
    return pl.pallas_call(
        _running_max_body,
        out_shape=jax.ShapeDtypeStruct((rows // ROWS, cols), jnp.float32),
        grid=(rows // ROWS,),
        in_specs=[pl.BlockSpec((ROWS, cols), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, cols), lambda i: (i, 0)),
        interpret=_INTERPRET_ON[jax.default_backend()],
        scratch_shapes=[pltpu.VMEM((1, cols), jnp.float32)],
    )(x)


def _inputs():
    return (jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 11.0,)


def expected():
    (x,) = _inputs()
    per_block = np.asarray(x).reshape(-1, ROWS, 128).max(axis=1)
    return np.maximum.accumulate(per_block, axis=0)


def target():
    return running_max, _inputs(), "interpret"
