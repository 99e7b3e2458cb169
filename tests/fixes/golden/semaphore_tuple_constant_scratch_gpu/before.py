"""PAL029: a tuple of two REGULAR semaphore types as one Mosaic GPU scratch entry, indexed .at[1]: the body gets a
tuple of refs ("AttributeError: 'tuple' object has no attribute 'at'")."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)
PHASES = (plgpu.SemaphoreType.REGULAR, plgpu.SemaphoreType.REGULAR)


def body(x_ref, o_ref, phases):
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(phases.at[1])
  pl.semaphore_wait(phases.at[1])


def run(x):
  return plgpu.kernel(body, out_type=X, scratch_types=[PHASES])(x)


def target():
  return run, (X,), "cuda"
