"""A Triton pallas_call that syncs each block's threads on a "barrier" from get_global: Triton has neither."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
GRID = (2,)


def body(x_ref, o_ref, sync_ref):
  o_ref[...] = x_ref[...] + 1.0
  plgpu.barrier_arrive(sync_ref)
  plgpu.barrier_wait(sync_ref)


def target():
  fn = plgpu.kernel(
    body, out_type=X, grid=GRID, grid_names=("x",), scratch_types=[plgpu.Barrier()]
  )
  return fn, (X,), "triton"
