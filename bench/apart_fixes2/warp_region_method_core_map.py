"""A kernel class whose warp-specialised region is a method launched with `pl.core_map(self.mesh)(fn)`.

The per-warp function asks for a shaped global semaphore, one entry per signalling warp; Mosaic GPU
cannot lower `get_global` at warp level.
"""
# fix-rate: kind=hoist_out_of_warp_region meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class WarpConfig:
  width: int = 256
  signalling_warps: int = 2


class WarpSignalKernel:
  def __init__(self, cfg: WarpConfig):
    self.cfg = cfg
    self.mesh = plgpu.WarpMesh(axis_name="warp")

  def _warp_region(self):
    def per_warp():
      flags = pl.get_global(plgpu.SemaphoreType.REGULAR((self.cfg.signalling_warps,)))
      warp = jax.lax.axis_index("warp")
      for w in range(self.cfg.signalling_warps):
        @pl.when(warp == w)
        def _raise():
          pl.semaphore_signal(flags.at[w])
          pl.semaphore_wait(flags.at[w])

    pl.core_map(self.mesh)(per_warp)

  def body(self, x_ref, y_ref):
    y_ref[...] = x_ref[...] * 3.0
    self._warp_region()

  def __call__(self, x):
    out = jax.ShapeDtypeStruct((self.cfg.width,), jnp.float32)
    return plgpu.kernel(self.body, out_type=out)(x)


def target():
  k = WarpSignalKernel(WarpConfig())
  return k, (jax.ShapeDtypeStruct((k.cfg.width,), jnp.float32),), "cuda"


if __name__ == "__main__":
  k = WarpSignalKernel(WarpConfig())
  x = jnp.ones((k.cfg.width,), jnp.float32)
  np.testing.assert_array_equal(jax.jit(k)(x), np.full((k.cfg.width,), 3.0, np.float32))
  print("warp signal ok")
