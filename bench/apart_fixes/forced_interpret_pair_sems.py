"""A debugging entry point that forces the GPU interpreter around a kernel with a pair of semaphores."""
# fix-rate: kind=scratch_interpret_true meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 32


def swap_halves(x_ref, o_ref):
  pair = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(pair.at[0])
  pl.semaphore_wait(pair.at[0])
  o_ref[: N // 2] = x_ref[N // 2 :]
  o_ref[N // 2 :] = x_ref[: N // 2]
  pl.semaphore_signal(pair.at[1])
  pl.semaphore_wait(pair.at[1])


def debug_run(x):
  with plgpu.force_gpu_interpret_mode():
    return plgpu.kernel(swap_halves, out_type=jax.ShapeDtypeStruct((N,), jnp.float32))(x)


def expected():
  x = np.arange(N, dtype=np.float32)
  return np.concatenate([x[N // 2 :], x[: N // 2]])


def target():
  return debug_run, (jnp.arange(N, dtype=jnp.float32),), "interpret"
