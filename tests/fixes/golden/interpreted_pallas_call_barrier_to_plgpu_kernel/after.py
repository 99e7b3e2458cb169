"""A pallas_call the GPU interpreter runs, syncing on a "barrier" from get_global: it runs none (nan + barrier)."""
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
    body,
    out_type=X,
    grid=GRID,
    grid_names=("x",),
    interpret=plgpu.InterpretGPUParams(),
    scratch_types=[plgpu.Barrier()],
  )
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.full((128,), 2.0, jnp.float32)
