"""An array of "barriers" from get_global, one of them arrived on and waited for by each block."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  stages = pl.get_global(plgpu.SemaphoreType.REGULAR((2, 3)))
  plgpu.barrier_arrive(stages.at[1, 2])
  plgpu.barrier_wait(stages.at[1, 2])
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return kernel, (X,), "cuda"
