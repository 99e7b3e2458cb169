"""The TPU port stages its sum in the same shared type, a Mosaic GPU one: the GPU kernel keeps it, so this use
becomes a TPU buffer of its shape and dtype.

(Before, jax 0.12: "Invalid memory space: <MemorySpace.SMEM: 'smem'>".)
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import backend_tiles


def _add(x_ref, y_ref, o_ref, acc):
    acc[...] = x_ref[...] + y_ref[...]
    o_ref[...] = acc[...]


def add(x, y):
    return pl.pallas_call(_add, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          scratch_shapes=[pltpu.VMEM(backend_tiles.ACC_TILE.shape,
                                                     backend_tiles.ACC_TILE.dtype)],
                          compiler_params=pltpu.CompilerParams())(x, y)


def target():
    x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    return add, (x, x), "tpu"
