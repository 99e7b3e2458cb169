"""A pallas_call set_gpu_interpret_mode makes interpreted, syncing on a "barrier" from get_global: it runs none."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sync_ref):
  plgpu.barrier_arrive(sync_ref)
  plgpu.barrier_wait(sync_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  plgpu.set_gpu_interpret_mode()
  fn = plgpu.kernel(
    body, out_type=X, grid=(2,), grid_names=("x",), scratch_types=[plgpu.Barrier()]
  )
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def cleanup():
  plgpu.set_gpu_interpret_mode(None)


def expected():
  return jnp.full((128,), 2.0, jnp.float32)
