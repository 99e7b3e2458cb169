"""A Triton pallas_call that syncs its block on a global semaphore used as a barrier and lists an unused
semaphore among its outputs: Mosaic GPU has SMEM barriers, and a kernel returns no semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, sync_ref):
  plgpu.barrier_arrive(sync_ref)
  plgpu.barrier_wait(sync_ref)
  o_ref[...] = x_ref[...] + 1.0


def target():
  fn = plgpu.kernel(
    body,
    out_type=(X,),
    grid=(2,),
    grid_names=("x",),
    scratch_types=[plgpu.Barrier()],
  )
  return fn, (X,), "triton"
