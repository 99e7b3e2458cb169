"""Per-shard "last block finishes" normalisation, launched under `jax.shard_map`.

Each block of the grid writes its slice of the output and then bumps a completion counter; block 0
waits until every other block has signalled before it writes the shard's header row (the row count
the downstream all-gather expects).  The counter was carried over from the TPU version of this op,
where the same helper built the semaphore for the TPU launch.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import NamedSharding, PartitionSpec as P

# fix-rate: kind=semaphore_kind meaning=preserving

AXIS = "data"
BLOCK_ROWS = 128


def _completion_counter():
  """A counter every block of the launch sees."""
  return pl.get_global(pltpu.SemaphoreType.DMA)


def _normalise_body(x_gmem, o_gmem, hdr_gmem, *, num_blocks: int, inv_norm: float):
  block = jax.lax.axis_index("rows")
  done = _completion_counter()
  rows = pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)
  o_gmem[rows] = x_gmem[rows] * inv_norm

  @pl.when(block != 0)
  def _report():
    pl.semaphore_signal(done, 1)

  @pl.when(block == 0)
  def _header():
    pl.semaphore_wait(done, num_blocks - 1)
    hdr_gmem[...] = jnp.full(hdr_gmem.shape, num_blocks * BLOCK_ROWS, hdr_gmem.dtype)


def _per_shard(x: jax.Array, inv_norm: float):
  rows = x.shape[0]
  num_blocks = rows // BLOCK_ROWS
  kernel = plgpu.kernel(
      functools.partial(_normalise_body, num_blocks=num_blocks, inv_norm=inv_norm),
      out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((128,), jnp.int32)),
      grid=(num_blocks,),
      grid_names=("rows",),
  )
  return kernel(x)


def make_normalise(mesh: jax.sharding.Mesh, inv_norm: float = 0.125):
  return jax.shard_map(
      functools.partial(_per_shard, inv_norm=inv_norm),
      mesh=mesh,
      in_specs=P(AXIS),
      out_specs=(P(AXIS), P(AXIS)),
  )


def target():
  mesh = jax.make_mesh((1,), (AXIS,))
  sharding = NamedSharding(mesh, P(AXIS))
  return make_normalise(mesh), (jax.ShapeDtypeStruct((512,), jnp.float32, sharding=sharding),), "cuda"


if __name__ == "__main__":
  mesh = jax.make_mesh((jax.device_count(),), (AXIS,))
  out, header = make_normalise(mesh)(jnp.ones((512 * jax.device_count(),), jnp.float32))
  print(out[:4], header)
