"""Grid-wide flag allocated with run_scoped over the grid axis (Mosaic GPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _body(x_ref, o_ref):
  def scoped(flag):
    pl.semaphore_signal(flag)
    pl.semaphore_wait(flag, 1)
    o_ref[...] = x_ref[...]

  pl.run_scoped(scoped, plgpu.SemaphoreType.REGULAR, collective_axes="blk")


def copy(x):
  return plgpu.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,), grid_names=("blk",))(x)


def target():
  return copy, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(copy(jnp.ones((128,), jnp.float32)))
