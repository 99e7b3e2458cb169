"""Two REGULAR semaphores from one list comprehension over `range(NUM_PHASES)`, in a warp-specialized kernel with no
grid: the comprehension reserves one per item, past what JAX's estimator made room for. One block of a grid."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

NUM_PHASES = 2


def _pingpong(x_ref, o_ref):
  wg = jax.lax.axis_index("wg")
  phases = [pl.get_global(plgpu.SemaphoreType.REGULAR) for _ in range(NUM_PHASES)]

  @pl.when(wg == 0)
  def _():
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(phases[0])
    pl.semaphore_wait(phases[1])

  @pl.when(wg == 1)
  def _():
    pl.semaphore_wait(phases[0])
    pl.semaphore_signal(phases[1])


def target():
  x = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(_pingpong, out_type=x, num_threads=2, thread_name="wg"), (x,), "cuda"
