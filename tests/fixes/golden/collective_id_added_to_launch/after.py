"""A neighbour handshake kernel object whose launch gives no compiler parameters at all."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class Handshake:

  def __init__(self, scale):
    self.scale = scale

  def _body(self, x_ref, o_ref):
    ready = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(ready, 1)
    pl.semaphore_wait(ready, 1)
    o_ref[...] = x_ref[...] * self.scale

  def __call__(self, x):
    return pl.pallas_call(
      self._body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


def target():
  return Handshake(3.0), (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
