"""Neighbour handshake before a ring step of the tensor-parallel all-gather (Pallas TPU).

Before device ``d`` starts its remote writes into device ``d + 1`` it must know
that ``d + 1`` has entered the kernel (and so allocated its receive buffers).
Each device signals the barrier semaphore of its right neighbour and waits for
the signal of its left one; then it scales its shard, which stands in for the
ring step here.

``RingCollective`` is the object the model's TP layer holds; ``compiler_params``
mirrors the per-kernel params helper of the collectives module.
"""

# fix-rate: kind=collective_id meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

AXIS = "tp"


def compiler_params(*, vmem_limit_mb: int = 32) -> pltpu.CompilerParams:
  return pltpu.CompilerParams(
      dimension_semantics=("arbitrary",),
      vmem_limit_bytes=vmem_limit_mb * 1024 * 1024,
  )


def _handshake_then_scale(x_ref, o_ref, *, num_devices: int, scale: float):
  me = jax.lax.axis_index(AXIS)
  right = jax.lax.rem(me + 1, num_devices)
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(
      barrier, 1, device_id=(right,), device_id_type=pl.DeviceIdType.MESH
  )
  pl.semaphore_wait(barrier, 1)
  o_ref[...] = x_ref[...] * scale


@dataclasses.dataclass(frozen=True)
class RingCollective:
  mesh: jax.sharding.AbstractMesh
  scale: float = 1.0

  @property
  def num_devices(self) -> int:
    return self.mesh.shape[AXIS]

  def _per_shard(self, x_shard):
    return pl.pallas_call(
        functools.partial(
            _handshake_then_scale, num_devices=self.num_devices, scale=self.scale
        ),
        out_shape=jax.ShapeDtypeStruct(x_shard.shape, x_shard.dtype),
        grid=(1,),
        in_specs=[pl.BlockSpec(x_shard.shape, lambda i: (0, 0))],
        out_specs=pl.BlockSpec(x_shard.shape, lambda i: (0, 0)),
        compiler_params=compiler_params(),
    )(x_shard)

  def __call__(self, x):
    return jax.shard_map(
        self._per_shard, mesh=self.mesh, in_specs=P(AXIS), out_specs=P(AXIS),
        check_vma=False,
    )(x)


def _abstract_mesh(n: int):
  device = jax.sharding.AbstractDevice(device_kind="TPU v5 lite", num_cores=None, platform="tpu")
  return jax.sharding.AbstractMesh((n,), (AXIS,), abstract_device=device)


def target():
  mesh = _abstract_mesh(4)
  sharding = jax.sharding.NamedSharding(mesh, P(AXIS))
  x = jax.ShapeDtypeStruct((4 * 8, 128), jnp.float32, sharding=sharding)
  return RingCollective(mesh, scale=2.0), (x,), "tpu"


if __name__ == "__main__":
  mesh = jax.make_mesh((jax.device_count(),), (AXIS,))
  ring = RingCollective(mesh, scale=2.0)
  print(jax.jit(ring)(jnp.ones((jax.device_count() * 8, 128), jnp.float32))[::8, 0])
