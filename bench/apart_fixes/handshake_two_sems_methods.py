"""A handshake kernel class whose two semaphores come from two methods; single block, no grid."""
# fix-rate: kind=semaphore_array meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Handshake:
  sem_kind = plgpu.SemaphoreType.REGULAR

  def request_sem(self):
    return pl.get_global(self.sem_kind)

  def reply_sem(self):
    return pl.get_global(self.sem_kind)

  def body(self, x_ref, o_ref):
    request, reply = self.request_sem(), self.reply_sem()
    pl.semaphore_signal(request)
    pl.semaphore_wait(request)
    o_ref[...] = x_ref[...] * 4.0
    pl.semaphore_signal(reply)
    pl.semaphore_wait(reply)

  def kernel(self, shape):
    return plgpu.kernel(self.body, out_type=shape)


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  return Handshake().kernel(io), (io,), "cuda"
