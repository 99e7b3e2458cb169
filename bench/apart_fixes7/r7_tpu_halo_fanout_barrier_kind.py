"""Halo fan-out for a sequence-parallel convolution on TPU.

A causal convolution of width `hops + 1` over a sequence sharded along a mesh axis needs, on every
device, the shards of the `hops` devices to its left. `halo_fanout(x)` sends each device's shard to
the `hops` devices on its right with remote DMAs; slot `k - 1` of the result holds the shard of the
device `k` hops to the left (wrapping around the ring; the caller masks the wrapped ones).

The devices meet at a barrier semaphore first, so that no DMA lands in a kernel that has not started.
The number of hops, hence of semaphores, comes from `HaloConfig`, validated in `__post_init__`.
"""

# fix-rate: kind=barrier_semaphore meaning=preserving

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import NamedSharding, PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class HaloConfig:
  axis: str = "seq"
  ring_size: int = 8
  hops: int = 2
  collective_id: int = 3

  def __post_init__(self):
    if not 0 < self.hops < self.ring_size:
      raise ValueError(f"hops={self.hops} must be in [1, ring_size={self.ring_size})")

  @property
  def num_dma_semaphores(self) -> int:
    return self.hops


def _peers(me, cfg: HaloConfig) -> Iterator[tuple[int, jax.Array, jax.Array]]:
  """Yields `(hop, right_peer, left_peer)` for every hop."""
  for hop in range(1, cfg.hops + 1):
    yield hop, lax.rem(me + hop, cfg.ring_size), lax.rem(me + cfg.ring_size - hop, cfg.ring_size)


def _halo_kernel(x_hbm, o_hbm, send_sems, recv_sems, *, cfg: HaloConfig):
  me = lax.axis_index(cfg.axis)
  barrier = pl.get_global(pltpu.SemaphoreType.BARRIER)
  for _, right, left in _peers(me, cfg):
    pl.semaphore_signal(barrier, 1, device_id=(right,), device_id_type=pl.DeviceIdType.MESH)
    pl.semaphore_signal(barrier, 1, device_id=(left,), device_id_type=pl.DeviceIdType.MESH)
  pl.semaphore_wait(barrier, 2 * cfg.hops)

  copies = []
  for hop, right, _ in _peers(me, cfg):
    copy = pltpu.make_async_remote_copy(
        x_hbm, o_hbm.at[hop - 1], send_sems.at[hop - 1], recv_sems.at[hop - 1],
        device_id=(right,), device_id_type=pl.DeviceIdType.MESH)
    copy.start()
    copies.append(copy)
  for copy in copies:
    copy.wait()


def _halo_call(x: jax.Array, cfg: HaloConfig) -> jax.Array:
  return pl.pallas_call(
      functools.partial(_halo_kernel, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((cfg.hops, *x.shape), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pl.ANY),
      scratch_shapes=[pltpu.SemaphoreType.DMA((cfg.num_dma_semaphores,))] * 2,
  )(x)


def halo_fanout(x: jax.Array, mesh, cfg: HaloConfig = HaloConfig()) -> jax.Array:
  return jax.shard_map(functools.partial(_halo_call, cfg=cfg), mesh=mesh,
                       in_specs=P(cfg.axis), out_specs=P(None, cfg.axis), check_vma=False)(x)


def target():
  cfg = HaloConfig()
  mesh = jax.sharding.AbstractMesh((cfg.ring_size,), (cfg.axis,))

  def run(x):
    with jax.sharding.use_abstract_mesh(mesh):
      return halo_fanout(x, mesh, cfg)

  x = jax.ShapeDtypeStruct((8 * 128, 512), jnp.bfloat16, sharding=NamedSharding(mesh, P(cfg.axis)))
  return run, (x,), "tpu"
