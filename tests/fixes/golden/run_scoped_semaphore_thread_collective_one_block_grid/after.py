"""A gridless kernel with two warpgroups that counts its calls in a global semaphore and hands work between its
warpgroups through a run_scoped one allocated per warpgroup, which Mosaic GPU refuses. Made collective over
'wg', JAX still cannot lower it beside the global semaphore without grid names: on a one-block grid (one block
before, one after) it lowers."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


@plgpu.kernel(
  out_type=X, num_threads=2, thread_name="wg", grid=(1,), grid_names=("block",)
)
def handoff(x_ref, o_ref):
  calls = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(calls)

  def exchange(ready):
    pl.semaphore_signal(ready)
    pl.semaphore_wait(ready)

  pl.run_scoped(exchange, plgpu.SemaphoreType.REGULAR, collective_axes="wg")
  o_ref[...] = x_ref[...] + 1.0


def target():
  return handoff, (X,), "cuda"
