"""A loader keeps its allocation types in a dict on self and hands out its barrier from a method the body calls:
the helper method's self is the instance the body is bound to, so the launch names the type as written."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Loader:
  def __init__(self, n=256):
    self.n = n
    self._alloc = {"landing": plgpu.SMEM((n,), jnp.float32), "ready": plgpu.Barrier(num_arrivals=1)}

  def ready_barrier(self):
    return pl.get_global(self._alloc["ready"])

  def body(self, src_ref, out_ref, landing_ref):
    ready = self.ready_barrier()
    plgpu.copy_gmem_to_smem(src_ref, landing_ref, barrier=ready)
    plgpu.barrier_wait(ready)
    out_ref[...] = landing_ref[...] * 2.0

  def build(self):
    io = jax.ShapeDtypeStruct((self.n,), jnp.float32)
    return plgpu.kernel(self.body, out_type=io, scratch_types=[self._alloc["landing"]]), io


def target():
  fn, io = Loader().build()
  return fn, (io,), "cuda"
