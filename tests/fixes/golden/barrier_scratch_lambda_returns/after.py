"""A "barrier" from a get_global a lambda returns: the lambda's call is no use as a semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sync_ref):
  plgpu.barrier_arrive(sync_ref)
  plgpu.barrier_wait(sync_ref)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(
  body, out_type=X, grid=(2,), grid_names=("x",), scratch_types=[plgpu.Barrier()]
)


def target():
  return kernel, (X,), "cuda"
