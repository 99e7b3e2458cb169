"""A producer and a consumer kernel share a semaphore made with plgpu.alloc_semaphore."""
# fix-rate: clean

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROW = jax.ShapeDtypeStruct((128,), jnp.float32)


def produce_body(ready_ref, x_ref, y_ref):
  y_ref[...] = x_ref[...] * 0.25
  pl.semaphore_signal(ready_ref)


def consume_body(ready_ref, y_ref, z_ref):
  pl.semaphore_wait(ready_ref)
  z_ref[...] = y_ref[...] + 1.0


def pipeline(x):
  ready = plgpu.alloc_semaphore()
  y = plgpu.kernel(produce_body, out_type=ROW)(ready, x)
  return plgpu.kernel(consume_body, out_type=ROW)(ready, y)


def target():
  return pipeline, (ROW,), "cuda"
