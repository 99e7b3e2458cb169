"""A compiled pl.kernel whose warpgroups meet at the one "barrier" of a list asked of get_global."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  stages = [pl.get_global(plgpu.SemaphoreType.REGULAR) for _ in range(1)]
  plgpu.barrier_arrive(stages[0])
  plgpu.barrier_wait(stages[0])
  o_ref[...] = x_ref[...] + 1.0


kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg"))


def target():
  return kernel, (X,), "cuda"
