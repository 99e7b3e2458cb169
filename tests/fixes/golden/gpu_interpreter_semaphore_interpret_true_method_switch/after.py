import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class DebugOptions:
  on_cpu: bool = True

  def interpreter(self):
    return self.on_cpu


def _fenced_scale(x_ref, o_ref, *, scale):
  def fenced(fence):
    o_ref[...] = x_ref[...] * scale
    pl.semaphore_signal(fence)
    pl.semaphore_wait(fence)

  pl.run_scoped(fenced, plgpu.SemaphoreType.REGULAR)


def fenced_scale(x, options: DebugOptions = DebugOptions()):
  return plgpu.kernel(
      functools.partial(_fenced_scale, scale=0.5),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=options.interpreter(),
  )(x)


def _x():
  return jnp.linspace(0.0, 4.0, 64, dtype=jnp.float32)


def target():
  return fenced_scale, (_x(),), "interpret"


def expected():
  return np.asarray(_x()) * 0.5
