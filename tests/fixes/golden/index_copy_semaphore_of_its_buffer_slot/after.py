"""PAL005: a double-buffered copy's DMA semaphore array handed whole to a descriptor class that keeps it
(`self._sem`) and starts the copy in a method: paged attention's MultiPageAsyncCopyDescriptor."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class PageCopy:
  def __init__(self, hbm_ref, vmem_slot, sem, page):
    self._hbm_ref = hbm_ref
    self._vmem_slot = vmem_slot
    self._sem = sem
    self._page = page

  def start(self):
    pltpu.make_async_copy(self._hbm_ref.at[self._page], self._vmem_slot, self._sem).start()

  def wait_and_get(self):
    pltpu.make_async_copy(self._vmem_slot, self._vmem_slot, self._sem).wait()
    return self._vmem_slot[...]


def kernel(x_hbm_ref, o_ref, buffers, sems):
  slot = pl.program_id(0) % 2
  copy = PageCopy(x_hbm_ref, buffers.at[slot], sems.at[slot], pl.program_id(0))
  copy.start()
  o_ref[...] = copy.wait_and_get()


def target():
  call = pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
      grid=(2,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
      scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
  )
  return call, (jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),), "tpu"
