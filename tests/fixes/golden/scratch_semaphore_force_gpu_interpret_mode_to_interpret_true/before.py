"""A debugging entry point forcing the GPU interpreter around the one launch it builds: that interpreter runs no
semaphore, and compiled the kernel would no longer run on the CPU. One block: the semaphores become scratch and
the launch says interpret=True itself, in place of the context."""
import jax
import jax.numpy as jnp
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


def target():
  return debug_run, (jnp.arange(N, dtype=jnp.float32),), "interpret"


def expected():
  x = jnp.arange(N, dtype=jnp.float32)
  return jnp.concatenate([x[N // 2 :], x[: N // 2]])
