"""PAL015: the scratch list is written in each branch (with or without a scales buffer, paged attention's), and the
branch taken allocates the copies' semaphore REGULAR; a descriptor class makes the copies in `__init__`, keeps them
in a list and waits on them in a method (ragged paged attention's MultiPageAsyncCopyDescriptor)."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class PagesCopy:
  def __init__(self, hbm_ref, vmem_buf, sem):
    self._vmem_buf = vmem_buf
    self._copies = []
    for i in range(vmem_buf.shape[0]):
      self._copies.append(pltpu.make_async_copy(hbm_ref.at[i], vmem_buf.at[i], sem))

  def start(self):
    for copy in self._copies:
      copy.start()

  def wait(self):
    for copy in self._copies:
      copy.wait()
    return self._vmem_buf


def scaled_kernel(x_hbm_ref, o_ref, buffers, scales, sems, *, factor):
  copy = PagesCopy(x_hbm_ref, buffers.at[0], sems.at[0])
  copy.start()
  o_ref[...] = copy.wait()[...].sum(axis=0) * scales[...] * factor


def plain_kernel(x_hbm_ref, o_ref, buffers, scales, sems, *, factor):
  del scales
  copy = PagesCopy(x_hbm_ref, buffers.at[0], sems.at[0])
  copy.start()
  o_ref[...] = copy.wait()[...].sum(axis=0) * factor


def copy_pages(x, scaled):
  if scaled:
    scratch_shapes = (
        pltpu.VMEM((2, 2, 8, 128), jnp.float32),
        pltpu.VMEM((8, 128), jnp.float32),
        pltpu.SemaphoreType.DMA((2,)),
    )
  else:
    scratch_shapes = (
        pltpu.VMEM((2, 2, 8, 128), jnp.float32),
        None,
        pltpu.SemaphoreType.DMA((2,)),
    )
  kernel = scaled_kernel if scaled else plain_kernel
  return pl.pallas_call(
      functools.partial(kernel, factor=2.0),
      out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      scratch_shapes=scratch_shapes,
  )(x)


def target():
  return functools.partial(copy_pages, scaled=False), (jax.ShapeDtypeStruct((2, 8, 128), jnp.float32),), "tpu"
