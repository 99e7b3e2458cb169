"""A kernel over any number of inputs (`def body(*refs)`) adds them row by row into a `pl.ANY` buffer it asked
for with `get_global`, then writes the sum plus one. In a plgpu.kernel that is global memory: it becomes one
more output (one more name in the body's unpacking of its last refs), whose shape is the output's, written at the
launch; the caller drops it.

(Before, jax 0.12: 'get_global only supports semaphores, got Ref<any>{float32[8,128]}'.)
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _sum_body(*refs, n):
    ins, (out,) = refs[:n], refs[n:]
    acc = pl.get_global(pl.ANY(out.shape, jnp.float32))
    acc[...] = ins[0][...]
    for x in ins[1:]:
        acc[...] = acc[...] + x[...]
    out[...] = acc[...] + 1.0


def sum_plus_one(*xs):
    return plgpu.kernel(
        functools.partial(_sum_body, n=len(xs)),
        out_type=jax.ShapeDtypeStruct(xs[0].shape, jnp.float32),
    )(*xs)


def target():
    x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    return sum_plus_one, (x, x, x), "cuda"
