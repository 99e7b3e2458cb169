"""One step of a bidirectional ring exchange on TPU (the building block of a ring all-gather).

Every device sends its shard to its right neighbour and, at the same time, to its left neighbour;
the two received shards are written to the two halves of the output. The devices first meet at the
barrier semaphore, so that no device writes into a neighbour's output before that neighbour's kernel
has started; then the two remote DMAs run concurrently, each with its own send and receive semaphore.

`RingExchange.for_mesh(mesh, "x")` binds the ring to one mesh axis; calling the object runs it under
`jax.shard_map`.
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import NamedSharding, PartitionSpec as P

LEFT, RIGHT = 0, 1


@dataclasses.dataclass(frozen=True)
class RingExchange:
  mesh: jax.sharding.AbstractMesh | jax.sharding.Mesh
  axis: str
  collective_id: int = 0

  @classmethod
  def for_mesh(cls, mesh, axis: str) -> "RingExchange":
    if axis not in mesh.axis_names:
      raise ValueError(f"{axis!r} is not an axis of {mesh.axis_names}")
    return cls(mesh, axis)

  @property
  def ring_size(self) -> int:
    return self.mesh.shape[self.axis]

  @staticmethod
  def _neighbours(axis: str, size: int):
    me = lax.axis_index(axis)
    return lax.rem(me + size - 1, size), lax.rem(me + 1, size)

  @staticmethod
  def _body(x_hbm, o_hbm, *, axis: str, size: int):
    left, right = RingExchange._neighbours(axis, size)
    send_sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))
    recv_sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))

    barrier = pltpu.get_barrier_semaphore()
    for peer in (left, right):
      pl.semaphore_signal(barrier, 1, device_id=(peer,), device_id_type=pl.DeviceIdType.MESH)
    pl.semaphore_wait(barrier, 2)

    # My shard lands in the RIGHT half of my left neighbour and the LEFT half of my right neighbour.
    to_left = pltpu.make_async_remote_copy(
        x_hbm, o_hbm.at[RIGHT], send_sems.at[LEFT], recv_sems.at[LEFT],
        device_id=(left,), device_id_type=pl.DeviceIdType.MESH)
    to_right = pltpu.make_async_remote_copy(
        x_hbm, o_hbm.at[LEFT], send_sems.at[RIGHT], recv_sems.at[RIGHT],
        device_id=(right,), device_id_type=pl.DeviceIdType.MESH)
    to_left.start()
    to_right.start()
    to_left.wait()
    to_right.wait()

  def _per_shard(self, x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        functools.partial(self._body, axis=self.axis, size=self.ring_size),
        out_shape=jax.ShapeDtypeStruct((2, *x.shape), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        compiler_params=pltpu.CompilerParams(collective_id=self.collective_id),
    )(x)

  def __call__(self, x: jax.Array) -> jax.Array:
    return jax.shard_map(self._per_shard, mesh=self.mesh, in_specs=P(self.axis),
                         out_specs=P(self.axis), check_vma=False)(x)


MESH = jax.sharding.AbstractMesh((4,), ("x",))


def target():
  ring = RingExchange.for_mesh(MESH, "x")

  def run(x):
    with jax.sharding.use_abstract_mesh(MESH):
      return ring(x)

  x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=NamedSharding(MESH, P("x")))
  return run, (x,), "tpu"
