"""A ring step whose per-peer semaphores are sized by a config (one peer in this build)."""
# fix-rate: kind=index meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class RingSpec:
  num_peers: int = 1
  width: int = 128

  def peer_sems(self):
    return plgpu.SemaphoreType.REGULAR((self.num_peers,))


def ring_step(spec: RingSpec):
  def body(x_ref, o_ref):
    arrived = pl.get_global(spec.peer_sems())
    o_ref[...] = x_ref[...] + 1.0
    pl.semaphore_signal(arrived)
    pl.semaphore_wait(arrived)

  io = jax.ShapeDtypeStruct((spec.width,), jnp.float32)
  return plgpu.kernel(body, out_type=io), io


def target():
  fn, io = ring_step(RingSpec())
  return fn, (io,), "cuda"
