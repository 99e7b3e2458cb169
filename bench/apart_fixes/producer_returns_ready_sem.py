"""A producer kernel returns its ready semaphore so that a consumer kernel can wait on it."""
# fix-rate: kind=alloc_semaphore meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROW = jax.ShapeDtypeStruct((128,), jnp.float32)


def produce_body(x_ref, y_ref, ready_ref):
  y_ref[...] = x_ref[...] * 0.25
  pl.semaphore_signal(ready_ref)


def consume_body(ready_ref, y_ref, z_ref):
  pl.semaphore_wait(ready_ref)
  z_ref[...] = y_ref[...] + 1.0


def pipeline(x):
  y, ready = plgpu.kernel(produce_body, out_type=(ROW, plgpu.SemaphoreType.REGULAR))(x)
  return plgpu.kernel(consume_body, out_type=ROW)(ready, y)


def target():
  return pipeline, (ROW,), "cuda"
