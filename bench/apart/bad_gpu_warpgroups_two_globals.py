"""Producer/consumer warpgroups that hand off through two global counters, single block."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(x_ref, o_ref):
  wg = jax.lax.axis_index("wg")
  full = pl.get_global(plgpu.SemaphoreType.REGULAR)
  empty = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(wg == 0)
  def _produce():
    pl.semaphore_signal(full)
    pl.semaphore_wait(empty, 1)

  @pl.when(wg == 1)
  def _consume():
    pl.semaphore_wait(full, 1)
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(empty)


def handoff_copy(x):
  return plgpu.kernel(
      _body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      num_threads=2,
      thread_name="wg",
  )(x)


def target():
  return handoff_copy, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(handoff_copy(jnp.ones((128,), jnp.float32)))
