"""SMEM stages asked for by a list comprehension of get_globals over a module's list of types: the list
becomes scratch_types and the body takes the buffers as `*stages`, each one of its own as before.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
STAGES = [plgpu.SMEM((128,), jnp.float32), plgpu.SMEM((128,), jnp.float32)]


def body(x_ref, o_ref):
    stages = [pl.get_global(kind) for kind in STAGES]
    stages[0][...] = x_ref[...]
    stages[1][...] = stages[0][...] + 1.0
    o_ref[...] = stages[1][...] * stages[0][...]


def target():
    return plgpu.kernel(body, out_type=X), (X,), "cuda"
