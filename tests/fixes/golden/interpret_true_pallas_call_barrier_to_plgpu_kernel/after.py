"""An interpret=True pallas_call syncing on a "barrier" from get_global: its interpreter runs no barrier."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sync_ref):
  plgpu.barrier_arrive(sync_ref)
  plgpu.barrier_wait(sync_ref)
  o_ref[...] = x_ref[...]


def target():
  fn = plgpu.kernel(
    body,
    out_type=X,
    interpret=plgpu.InterpretGPUParams(),
    scratch_types=[plgpu.Barrier()],
  )
  return fn, (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
  return jnp.ones((128,), jnp.float32)
