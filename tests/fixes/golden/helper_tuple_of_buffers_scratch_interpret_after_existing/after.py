"""An interpreted TPU kernel with scratch of its own (`seen`) whose running min and max come from a helper that
asks get_global for both and returns them; the body unpacks them. The helper returns their types and the launch's
scratch list gets them after its own entry, built by the helper with the launch's block rows."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS = 8


def running_extrema(rows):
    return pltpu.VMEM((rows, 1), jnp.float32), pltpu.VMEM((rows, 1), jnp.float32)


def range_kernel(x_ref, o_ref, seen, low, high):
    x = x_ref[...]
    seen[...] = x
    low[...] = jnp.min(seen[...], axis=1, keepdims=True)
    high[...] = jnp.max(seen[...], axis=1, keepdims=True)
    o_ref[...] = jnp.broadcast_to(high[...] - low[...], o_ref.shape)


def row_ranges(x):
    rows, cols = x.shape
    return pl.pallas_call(
        range_kernel,
        grid=(rows // ROWS,),
        in_specs=[pl.BlockSpec((ROWS, cols), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((ROWS, cols), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM((ROWS, cols), jnp.float32), *running_extrema(ROWS)],
        interpret=True,
    )(x)


def _x():
    return (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) % 7)


def target():
    return row_ranges, (_x(),), "interpret"


def expected():
    x = np.arange(16 * 128, dtype=np.float32).reshape(16, 128) % 7
    return np.broadcast_to(x.max(axis=1, keepdims=True) - x.min(axis=1, keepdims=True), x.shape)
