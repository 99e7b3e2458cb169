"""A debugging entry point forcing the GPU interpreter around the one launch it builds: that interpreter runs no
semaphore, and compiled the kernel would no longer run on the CPU. One block: the semaphores become scratch and
the launch says interpret=True itself, in place of the context."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 32


def swap_halves(x_ref, o_ref, pair_ref):
  pl.semaphore_signal(pair_ref.at[0])
  pl.semaphore_wait(pair_ref.at[0])
  o_ref[: N // 2] = x_ref[N // 2 :]
  o_ref[N // 2 :] = x_ref[: N // 2]
  pl.semaphore_signal(pair_ref.at[1])
  pl.semaphore_wait(pair_ref.at[1])


def debug_run(x):
  return plgpu.kernel(
    swap_halves,
    out_type=jax.ShapeDtypeStruct((N,), jnp.float32),
    interpret=True,
    scratch_types=[plgpu.SemaphoreType.REGULAR((2,))],
  )(x)


def target():
  return debug_run, (jnp.arange(N, dtype=jnp.float32),), "interpret"


def expected():
  x = jnp.arange(N, dtype=jnp.float32)
  return jnp.concatenate([x[N // 2 :], x[: N // 2]])
