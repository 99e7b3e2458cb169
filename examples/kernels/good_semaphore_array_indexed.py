"""Correct (the look-alike of PAL005 and PAL004): two semaphores in one shaped global semaphore,
each signalled and waited on through `.at[i]`, in a kernel without a grid.

pallas-lsp reports nothing, and JAX lowers it for CUDA.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def handshake(x_ref, o_ref):
  sems = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(sems.at[0])
  pl.semaphore_wait(sems.at[0])
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(sems.at[1])
  pl.semaphore_wait(sems.at[1])


# pallas-lsp: trace(f32[128])
double = plgpu.kernel(handshake, out_type=X)


def target():
  return double, (X,), "cuda"
