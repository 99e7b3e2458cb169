"""A loader object that keeps its allocation kinds in a dict and hands out its barrier by a method."""
# fix-rate: kind=barrier_scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class TmaLoader:
  def __init__(self, n: int = 256):
    self.n = n
    self._alloc = {
        "landing": plgpu.SMEM((n,), jnp.float32),
        "ready": plgpu.Barrier(num_arrivals=1),
    }

  def ready_barrier(self):
    return pl.get_global(self._alloc["ready"])

  def body(self, src_ref, out_ref, landing_ref):
    ready = self.ready_barrier()
    plgpu.copy_gmem_to_smem(src_ref, landing_ref, barrier=ready)
    plgpu.barrier_wait(ready)
    out_ref[...] = landing_ref[...] * landing_ref[...]

  def build(self):
    io = jax.ShapeDtypeStruct((self.n,), jnp.float32)
    return plgpu.kernel(self.body, out_type=io, scratch_types=[self._alloc["landing"]]), io


def target():
  fn, io = TmaLoader().build()
  return fn, (io,), "cuda"
