"""PAL008: one semaphore read out of a plgpu.alloc_semaphore ref is an array, not a ref."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(sems, x_ref, o_ref):
  sem_ref = sems.at[0]
  pl.semaphore_signal(sem_ref)
  o_ref[...] = x_ref[...]


kernel = plgpu.kernel(body, out_type=X)


def step(x):
  sems = plgpu.alloc_semaphore((4,))
  return kernel(sems, x)


def target():
  return step, (X,), "cuda"
