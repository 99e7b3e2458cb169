"""TPU kernel streaming expert weights HBM -> VMEM -> HBM with a per-expert dequant scale.

Weights stay in HBM (`pl.ANY`); each grid step copies expert `e`'s slab in, scales it in f32 and copies
the result out. The inbound and outbound copies each get a DMA semaphore of the pair allocated in
`scratch_shapes`, so the outbound copy of step `e` overlaps nothing it should not.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class StreamConfig:
  rows: int
  cols: int

  def scratch_shapes(self, dtype):
    return [
        pltpu.VMEM((self.rows, self.cols), dtype),
        pltpu.VMEM((self.rows, self.cols), dtype),
        pltpu.SemaphoreType.DMA((2,)),
    ]


def stream_scale_kernel(scale_ref, w_hbm, o_hbm, w_vmem, o_vmem, sems):
  e = pl.program_id(0)
  in_sem, out_sem = sems
  inbound = pltpu.make_async_copy(w_hbm.at[e], w_vmem, in_sem)
  inbound.start()
  inbound.wait()
  o_vmem[...] = (w_vmem[...].astype(jnp.float32) * scale_ref[e]).astype(o_vmem.dtype)
  outbound = pltpu.make_async_copy(o_vmem, o_hbm.at[e], out_sem)
  outbound.start()
  outbound.wait()
