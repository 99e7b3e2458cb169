import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WIDTH = 128


def _publish(x_ref, o_ref, ready):
  o_ref[...] = x_ref[...] + 1.0
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready)


def publish(x):
  return plgpu.kernel(
      _publish,
      out_type=jax.ShapeDtypeStruct((WIDTH,), jnp.float32),
      scratch_types=[plgpu.SemaphoreType.REGULAR],
      interpret=plgpu.InterpretGPUParams(),
  )(x)


def _x():
  return jnp.arange(WIDTH, dtype=jnp.float32)


def target():
  return publish, (_x(),), "interpret"


def expected():
  return np.asarray(_x()) + 1.0
