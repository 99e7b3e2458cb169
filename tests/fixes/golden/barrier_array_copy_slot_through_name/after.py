"""A three-slot ring filled in a loop: each copy's destination is `dst = ring.at[slot]`, and the barrier array is
given whole (`Operation is only valid for a single barrier`). The copy gets the barrier of the slot it fills."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

SLOTS = 3


def body(x_gmem, o_gmem, ring, landed):
  for slot in range(SLOTS):
    dst = ring.at[slot]
    plgpu.copy_gmem_to_smem(x_gmem.at[slot], dst, landed.at[slot])
  for slot in range(SLOTS):
    plgpu.barrier_wait(landed.at[slot])
    ring[slot] = ring[slot] + 1.0
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(ring, o_gmem)
  plgpu.wait_smem_to_gmem(0)


def target():
  x = jax.ShapeDtypeStruct((SLOTS, 64, 128), jnp.float32)
  scratch = [plgpu.SMEM((SLOTS, 64, 128), jnp.float32), plgpu.Barrier(num_arrivals=1, num_barriers=SLOTS)]
  return plgpu.kernel(body, out_type=x, scratch_types=scratch), (x,), "cuda"
