"""Every kernel interpreted by plgpu.set_gpu_interpret_mode(): get_global fails there."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)
  o_ref[...] = x_ref[...] + 1.0


def target():
  # Debug on the CPU.
  plgpu.set_gpu_interpret_mode()
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (jnp.ones((128,), jnp.float32),), "interpret"


def cleanup():
  plgpu.set_gpu_interpret_mode(None)
