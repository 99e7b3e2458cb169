"""Producer/consumer warpgroups that hand off through a global counter."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(x_ref, o_ref):
  wg = jax.lax.axis_index("wg")
  handoff = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))

  @pl.when(wg == 0)
  def _produce():
    pl.semaphore_signal(handoff.at[1])

  @pl.when(wg == 1)
  def _consume():
    pl.semaphore_wait(handoff.at[1], 1)
    o_ref[...] = x_ref[...]


def handoff_copy(x):
  return plgpu.kernel(
      _body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(2,),
      grid_names=("blk",),
      num_threads=2,
      thread_name="wg",
  )(x)


def target():
  return handoff_copy, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(handoff_copy(jnp.ones((128,), jnp.float32)))
