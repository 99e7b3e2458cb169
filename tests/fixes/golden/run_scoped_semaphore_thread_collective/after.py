"""Generated kernel (issue 25, was reproducer miss_pal007_none_01): axes:grid_threads axes_holder:inline entry:kernel_call interpret:none items:0 scoped_sem:no_axes wrapper:none."""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def exchange(sem):
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)
  pl.run_scoped(exchange, plgpu.SemaphoreType.REGULAR, collective_axes="wg")
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",), num_threads=2, thread_name="wg")
  return fn, (X,), "cuda"
