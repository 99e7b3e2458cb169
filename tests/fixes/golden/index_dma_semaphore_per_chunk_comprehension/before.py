"""Two halves of a tile fetched concurrently by copies made in a comprehension, both given the whole DMA((2,))
array of a kernel class: each half's copy gets the semaphore of its index."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class HalvesFetch:
  ROWS = 16

  def __init__(self, scale):
    self.scale = scale

  def _body(self, src_hbm, out_ref, landing, sems, *, half):
    fetches = [pltpu.make_async_copy(src_hbm.at[pl.ds(i * half, half)], landing.at[pl.ds(i * half, half)],
                                     sems) for i in range(2)]
    for fetch in fetches:
      fetch.start()
    for fetch in fetches:
      fetch.wait()
    out_ref[...] = landing[...] * self.scale

  def __call__(self, x):
    return pl.pallas_call(
        functools.partial(self._body, half=self.ROWS // 2),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA((2,))],
    )(x)


def target():
  return HalvesFetch(3.0), (jax.ShapeDtypeStruct((HalvesFetch.ROWS, 128), jnp.float32),), "tpu"
