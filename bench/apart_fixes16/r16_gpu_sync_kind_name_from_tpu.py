"""Split-K partial sums with a grid-wide arrival count, Mosaic GPU port.

The TPU kernel synchronised its cores with the chip "barrier" semaphore, and the
shared `KernelTraits` table names the sync primitive by that word; the GPU
port looks the semaphore kind up by name on `plgpu.SemaphoreType`.
"""
# fix-rate: kind=regular_semaphore meaning=preserving
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class KernelTraits:
  splits: int
  block_rows: int
  sync: str  # the word used by the TPU implementation


TRAITS = {
    "tpu_v5e": KernelTraits(splits=2, block_rows=8, sync="barrier"),
    "h100": KernelTraits(splits=4, block_rows=64, sync="barrier"),
}


def _sync_semaphore(traits: KernelTraits):
  return pl.get_global(getattr(plgpu.SemaphoreType, traits.sync.upper()))


def _splitk_body(traits, x_ref, o_ref, done_ref):
  s = jax.lax.axis_index("split")
  rows = pl.ds(s * traits.block_rows, traits.block_rows)
  o_ref[rows, :] = x_ref[rows, :] * 2.0
  arrived = _sync_semaphore(traits)

  @pl.when(s != 0)
  def _arrive():
    pl.semaphore_signal(arrived)

  @pl.when(s == 0)
  def _gather():
    pl.semaphore_wait(arrived, traits.splits - 1)
    done_ref[...] = jnp.ones((x_ref.shape[-1],), jnp.float32)


@functools.partial(jax.jit, static_argnames=("device",))
def splitk_scale(x, device="h100"):
  traits = TRAITS[device]
  return plgpu.kernel(
      functools.partial(_splitk_body, traits),
      out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype),
                jax.ShapeDtypeStruct((x.shape[-1],), jnp.float32)),
      grid=(traits.splits,),
      grid_names=("split",),
  )(x)


def target():
  x = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return functools.partial(splitk_scale, device="h100"), (x,), "cuda"
