"""Per-slot semaphores in a keyword scratch dict; the slot loop forgets to pick its slot."""
# fix-rate: kind=index meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental import pallas as pl

SLOTS = 2
SCRATCH = {
    "slot_sems": plgpu.SemaphoreType.REGULAR((SLOTS,)),
    "rows": plgpu.SMEM((SLOTS, 128), jnp.float32),
}


def slotted(x_ref, o_ref, *, slot_sems, rows):
  for slot in range(SLOTS):
    rows[slot] = x_ref[slot] * float(slot + 1)
    pl.semaphore_signal(slot_sems)
    pl.semaphore_wait(slot_sems)
    o_ref[slot] = rows[slot]


def target():
  io = jax.ShapeDtypeStruct((SLOTS, 128), jnp.float32)
  return plgpu.kernel(slotted, out_type=io, scratch_types=SCRATCH), (io,), "cuda"
