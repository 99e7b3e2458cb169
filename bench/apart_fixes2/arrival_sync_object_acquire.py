"""A gather-and-scale kernel that synchronises its TMA copy through an `ArrivalSync` helper object.

`ArrivalSync.acquire()` returns the barrier the copy arrives on; `ArrivalSync.wait()` blocks on it.
The object asks `pl.get_global` for the barrier, which hands out only GMEM semaphores.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WIDTH = 256


class ArrivalSync:
  """Owns the barrier type of one producer/consumer hand-off."""

  def __init__(self, arrivals: int = 1):
    self.kind = plgpu.Barrier(num_arrivals=arrivals)
    self._barrier = None

  def acquire(self):
    self._barrier = pl.get_global(self.kind)
    return self._barrier

  def wait(self):
    plgpu.barrier_wait(self._barrier)


class ScaleKernel:
  def __init__(self, scale: float):
    self.scale = scale
    self.sync = ArrivalSync()

  def body(self, x_ref, y_ref, staging):
    barrier = self.sync.acquire()
    plgpu.copy_gmem_to_smem(x_ref, staging, barrier=barrier)
    self.sync.wait()
    y_ref[...] = staging[...] * self.scale

  def __call__(self, x):
    kernel = plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct((WIDTH,), jnp.float32),
        scratch_types=[plgpu.SMEM((WIDTH,), jnp.float32)],
    )
    return kernel(x)


def target():
  return ScaleKernel(0.5), (jax.ShapeDtypeStruct((WIDTH,), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.arange(WIDTH, dtype=jnp.float32)
  np.testing.assert_allclose(jax.jit(ScaleKernel(0.5))(x), np.asarray(x) * 0.5)
  print("scale ok")
