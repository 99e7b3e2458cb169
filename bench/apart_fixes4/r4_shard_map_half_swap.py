"""Per-shard half swap for the sequence-parallel attention prologue.

Every shard of the sequence axis swaps the two halves of its local block (a zig-zag reorder of the
causal load balancing) and scales it. The kernel is wrapped in `jax.shard_map`, so it only ever sees
its local block; both halves are pulled from HBM into VMEM with two concurrent DMAs.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import Mesh, PartitionSpec as P

NUM_HALVES = 2


def _half_swap_kernel(x_hbm, o_ref, *halves, scale: float):
  half = x_hbm.shape[0] // NUM_HALVES
  sems = pl.get_global(pltpu.SemaphoreType.DMA((NUM_HALVES,)))
  copies = [
      pltpu.make_async_copy(x_hbm.at[pl.ds(i * half, half)], halves[i], sems.at[i])
      for i in range(NUM_HALVES)
  ]
  for copy in copies:
    copy.start()
  for copy in copies:
    copy.wait()
  o_ref[pl.ds(0, half), :] = halves[1][...] * scale
  o_ref[pl.ds(half, half), :] = halves[0][...] * scale


def _local_half_swap(x_local: jax.Array, scale: float) -> jax.Array:
  rows, lanes = x_local.shape
  half = rows // NUM_HALVES
  return pl.pallas_call(
      functools.partial(_half_swap_kernel, scale=scale),
      out_shape=jax.ShapeDtypeStruct(x_local.shape, x_local.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.VMEM((half, lanes), x_local.dtype) for _ in range(NUM_HALVES)],
  )(x_local)


def make_half_swap(mesh: Mesh, axis: str = "sp", scale: float = 1.0):
  """Returns a function of the global (seq, hidden) array, sharded over `axis` of `mesh`."""

  @jax.jit
  def half_swap(x):
    return jax.shard_map(
        functools.partial(_local_half_swap, scale=scale),
        mesh=mesh,
        in_specs=P(axis, None),
        out_specs=P(axis, None),
        check_vma=False,
    )(x)

  return half_swap


def reference(x, num_shards, scale):
  blocks = x.reshape(num_shards, NUM_HALVES, -1, x.shape[-1])
  return (blocks[:, ::-1] * scale).reshape(x.shape)


def _mesh():
  return Mesh(np.array(jax.devices()[:1]), ("sp",))


def target():
  fn = make_half_swap(_mesh(), scale=0.5)
  return fn, (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  mesh = Mesh(np.array(jax.devices()), ("sp",))
  x = jnp.arange(256 * 128, dtype=jnp.float32).reshape(256, 128)
  got = make_half_swap(mesh, scale=0.5)(x)
  print(bool(jnp.allclose(got, reference(x, mesh.shape["sp"], 0.5))))
