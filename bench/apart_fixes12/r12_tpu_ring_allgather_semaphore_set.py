"""Unidirectional ring all-gather for TPU (one chip per mesh position along `axis`).

Each chip copies its shard into its own slot of the output, then forwards slot `(me - i) % n` to its
right neighbour for `i = 0 .. n-2`. A barrier handshake with both neighbours guards the first remote
write. The DMA semaphores of the ring are grouped in a `RingSemaphores` bundle.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

AXIS = "x"
COLLECTIVE_ID = 7


class RingSemaphores(NamedTuple):
  local: object
  send: object
  recv: object

  @classmethod
  def allocate(cls) -> "RingSemaphores":
    return cls(*(pl.get_global(pltpu.SemaphoreType.DMA) for _ in cls._fields))


@dataclasses.dataclass(frozen=True)
class RingConfig:
  num_devices: int
  axis: str = AXIS

  def neighbours(self, me):
    return lax.rem(me + self.num_devices - 1, self.num_devices), lax.rem(me + 1, self.num_devices)


def _ring_kernel(x_ref, o_ref, *, cfg: RingConfig):
  sems = RingSemaphores.allocate()
  me = lax.axis_index(cfg.axis)
  left, right = cfg.neighbours(me)
  pltpu.async_copy(x_ref, o_ref.at[me], sems.local).wait()

  handshake = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(handshake, 1, device_id=(left,), device_id_type=pl.DeviceIdType.MESH)
  pl.semaphore_signal(handshake, 1, device_id=(right,), device_id_type=pl.DeviceIdType.MESH)
  pl.semaphore_wait(handshake, 2)

  for i in range(cfg.num_devices - 1):
    slot = lax.rem(me + cfg.num_devices - i, cfg.num_devices)
    pltpu.make_async_remote_copy(
        o_ref.at[slot], o_ref.at[slot], sems.send, sems.recv,
        device_id=(right,), device_id_type=pl.DeviceIdType.MESH,
    ).start()
    pltpu.make_async_remote_copy(
        o_ref.at[slot], o_ref.at[slot], sems.send, sems.recv,
        device_id=(right,), device_id_type=pl.DeviceIdType.MESH,
    ).wait()


def ring_all_gather(x: jax.Array, mesh) -> jax.Array:
  cfg = RingConfig(num_devices=mesh.shape[AXIS])

  def local(shard):
    gathered = pl.pallas_call(
        functools.partial(_ring_kernel, cfg=cfg),
        out_shape=jax.ShapeDtypeStruct((cfg.num_devices, *shard.shape), shard.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        compiler_params=pltpu.CompilerParams(collective_id=COLLECTIVE_ID),
    )(shard)
    return gathered.reshape(-1, *shard.shape[1:])

  return jax.shard_map(local, mesh=mesh, in_specs=P(AXIS), out_specs=P(), check_vma=False)(x)


def _abstract_tpu_mesh(n: int):
  device = jax.sharding.AbstractDevice(device_kind="TPU v5 lite", num_cores=1, platform="tpu")
  return jax.sharding.AbstractMesh((n,), (AXIS,), abstract_device=device)


def target():
  mesh = _abstract_tpu_mesh(4)
  x = jax.ShapeDtypeStruct((4 * 64, 128), jnp.float32, sharding=jax.sharding.NamedSharding(mesh, P(AXIS)))
  return functools.partial(ring_all_gather, mesh=mesh), (x,), "tpu"
