"""Flag polling (non-decrementing wait) on Mosaic GPU, where it is a load loop."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@plgpu.kernel(out_type=jax.ShapeDtypeStruct((128,), jnp.float32), grid=(2,), grid_names=("b",))
def poll(x_ref, o_ref):
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ready)
  pl.semaphore_wait(ready, 1, decrement=False)
  o_ref[...] = x_ref[...]


def target():
  return poll, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(poll(jnp.ones((128,), jnp.float32)))
