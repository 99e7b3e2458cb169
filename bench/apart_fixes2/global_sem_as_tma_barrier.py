"""A TMA copy waits on a global semaphore where an SMEM barrier is needed.

The author already used `pl.get_global(plgpu.SemaphoreType.REGULAR)` for cross-block flags elsewhere
and reached for it again to wait for a TMA copy; a copy's completion is tracked by a `plgpu.Barrier`.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TUNING = {
    # device kind -> tile length
    "NVIDIA H100": 128,
    "NVIDIA H200": 256,
}
DEFAULT_TILE = 256


def tile_for(device_kind: str) -> int:
  return TUNING.get(device_kind, DEFAULT_TILE)


def square_body(x_ref, y_ref, tile_smem):
  copied = pl.get_global(plgpu.SemaphoreType.REGULAR)
  plgpu.copy_gmem_to_smem(x_ref, tile_smem, copied)
  plgpu.barrier_wait(copied)
  y_ref[...] = tile_smem[...] * tile_smem[...]


@functools.lru_cache(maxsize=None)
def square_kernel(tile: int):
  return plgpu.kernel(
      square_body,
      out_type=jax.ShapeDtypeStruct((tile,), jnp.float32),
      scratch_types=[plgpu.SMEM((tile,), jnp.float32)],
  )


def square(x):
  return square_kernel(x.shape[0])(x)


def target():
  return square, (jax.ShapeDtypeStruct((tile_for("NVIDIA H200"),), jnp.float32),), "cuda"


if __name__ == "__main__":
  tile = tile_for(jax.devices()[0].device_kind)
  x = jnp.arange(tile, dtype=jnp.float32)
  np.testing.assert_allclose(jax.jit(square)(x), np.asarray(x) ** 2)
  print("square ok")
