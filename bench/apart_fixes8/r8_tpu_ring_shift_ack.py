"""One step of a ring shift with receive acknowledgements (Pallas TPU).

Every device sends its shard to its right neighbour with a remote DMA and, once
the neighbour's shard has landed in its own output, acknowledges it to the left
neighbour, so that the sender knows its buffer may be reused by the next ring
step. Written after the ``ppermute`` example of the distributed Pallas guide.

The semaphores are requested in ``scratch_shapes``: the send/recv pair of the
remote copy and the acknowledgement counter.
"""

# fix-rate: kind=semaphore_kind meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

RING = "ring"
NUM_RING_SEMS = 3  # send, recv, ack


def _shift_kernel(x_ref, o_ref, send_sem, recv_sem, ack_sem, *, num_devices: int):
  me = jax.lax.axis_index(RING)
  right = jax.lax.rem(me + 1, num_devices)
  left = jax.lax.rem(me + num_devices - 1, num_devices)

  copy = pltpu.make_async_remote_copy(
      src_ref=x_ref,
      dst_ref=o_ref,
      send_sem=send_sem,
      recv_sem=recv_sem,
      device_id=(right,),
      device_id_type=pl.DeviceIdType.MESH,
  )
  copy.start()
  copy.wait_send()
  copy.wait_recv()

  # Tell the left neighbour its shard has arrived here.
  pl.semaphore_signal(
      ack_sem, 1, device_id=(left,), device_id_type=pl.DeviceIdType.MESH
  )
  pl.semaphore_wait(ack_sem, 1)


def ring_shift(x: jax.Array, mesh) -> jax.Array:
  num_devices = mesh.shape[RING]

  def per_shard(shard):
    return pl.pallas_call(
        functools.partial(_shift_kernel, num_devices=num_devices),
        out_shape=jax.ShapeDtypeStruct(shard.shape, shard.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * NUM_RING_SEMS,
    )(shard)

  return jax.shard_map(
      per_shard, mesh=mesh, in_specs=P(RING), out_specs=P(RING), check_vma=False
  )(x)


def _tpu_mesh(n: int):
  device = jax.sharding.AbstractDevice(device_kind="TPU v5 lite", num_cores=None, platform="tpu")
  return jax.sharding.AbstractMesh((n,), (RING,), abstract_device=device)


def target():
  mesh = _tpu_mesh(4)
  x = jax.ShapeDtypeStruct(
      (4 * 8, 128), jnp.float32, sharding=jax.sharding.NamedSharding(mesh, P(RING))
  )
  return functools.partial(ring_shift, mesh=mesh), (x,), "tpu"


if __name__ == "__main__":
  mesh = jax.make_mesh((jax.device_count(),), (RING,))
  x = jnp.arange(jax.device_count() * 8 * 128, dtype=jnp.float32).reshape(-1, 128)
  print(jax.jit(functools.partial(ring_shift, mesh=mesh))(x)[::8, 0])
