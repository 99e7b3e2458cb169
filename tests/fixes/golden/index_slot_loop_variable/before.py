"""Per-slot semaphores in a keyword scratch dict, signalled whole inside the loop over the slots: the loop's
variable, over as many slots as the semaphore has, is the index (unsafe: another one may have been meant)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SLOTS = 2
SCRATCH = {"slot_sems": plgpu.SemaphoreType.REGULAR((SLOTS,)), "rows": plgpu.SMEM((SLOTS, 128), jnp.float32)}


def slotted(x_ref, o_ref, *, slot_sems, rows):
  for slot in range(SLOTS):
    rows[slot] = x_ref[slot] * float(slot + 1)
    pl.semaphore_signal(slot_sems)
    pl.semaphore_wait(slot_sems.at[slot])
    o_ref[slot] = rows[slot]


def target():
  io = jax.ShapeDtypeStruct((SLOTS, 128), jnp.float32)
  return plgpu.kernel(slotted, out_type=io, scratch_types=SCRATCH), (io,), "cuda"
