"""A ping-pong smoothing kernel whose two shared-memory buffers are named in a dict on `self`.

Each pass reads one buffer and writes the other; the buffers were fetched in a dict comprehension of
`pl.get_global` calls over `self.smem`.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class SmoothingSpec:
  width: int = 128
  passes: int = 4
  weight: float = 0.5


class PingPongSmoother:
  """`passes` rounds of y = w * x + (1 - w) * shift(x), alternating between two buffers."""

  def __init__(self, spec: SmoothingSpec):
    self.spec = spec
    self.smem = {
        "ping": plgpu.SMEM((spec.width,), jnp.float32),
        "pong": plgpu.SMEM((spec.width,), jnp.float32),
    }

  @property
  def io(self):
    return jax.ShapeDtypeStruct((self.spec.width,), jnp.float32)

  def _body(self, x_ref, y_ref):
    bufs = {name: pl.get_global(kind) for name, kind in self.smem.items()}
    w = self.spec.weight
    bufs["ping"][...] = x_ref[...]
    src, dst = "ping", "pong"
    for _ in range(self.spec.passes):
      bufs[dst][...] = w * bufs[src][...] + (1.0 - w) * bufs[src][...] * 0.5
      src, dst = dst, src
    y_ref[...] = bufs[src][...]

  def __call__(self, x):
    return plgpu.kernel(self._body, out_type=self.io)(x)


def reference(spec: SmoothingSpec, x):
  y = np.asarray(x)
  for _ in range(spec.passes):
    y = spec.weight * y + (1.0 - spec.weight) * y * 0.5
  return y


def target():
  smoother = PingPongSmoother(SmoothingSpec())
  return smoother, (smoother.io,), "cuda"


if __name__ == "__main__":
  smoother = PingPongSmoother(SmoothingSpec())
  x = jnp.full((smoother.spec.width,), 16.0, jnp.float32)
  np.testing.assert_allclose(jax.jit(smoother)(x), reference(smoother.spec, x), rtol=1e-6)
  print("smoothing ok")
