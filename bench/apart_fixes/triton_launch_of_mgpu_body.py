"""A body written for Mosaic GPU (it pulses a global semaphore) launched through pl.pallas_call."""
# fix-rate: kind=mosaic_gpu_kernel meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

VEC = jax.ShapeDtypeStruct((128,), jnp.float32)


def halve_body(x_ref, o_ref):
  gate = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 0.5
  pl.semaphore_signal(gate)
  pl.semaphore_wait(gate)


def halve(x):
  return pl.pallas_call(halve_body, out_shape=VEC)(x)


def target():
  return halve, (VEC,), "triton"
