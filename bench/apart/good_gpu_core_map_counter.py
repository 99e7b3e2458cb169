"""Low-level launch with pl.core_map over a Mosaic GPU mesh, refs closed over."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def add_one(x):
  def stateful(refs):
    x_ref, o_ref = refs

    @pl.core_map(plgpu.Mesh(grid=(2,), grid_names=("b",)))
    def _():
      sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
      pl.semaphore_signal(sem)
      pl.semaphore_wait(sem, 1)
      o_ref[...] = x_ref[...] + 1.0

  _, out = pl.run_state(stateful)((x, jnp.zeros_like(x)))
  return out


def target():
  return add_one, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(add_one(jnp.ones((128,), jnp.float32)))
