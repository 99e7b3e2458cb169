"""A TPU semaphore type in a Mosaic GPU kernel; the file imports mosaic_gpu without an alias."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  flags = pl.get_global(mosaic_gpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(flags.at[0])
  pl.semaphore_wait(flags.at[0])
  o_ref[...] = x_ref[...]


def target():
  return mosaic_gpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)), (X,), "cuda"
