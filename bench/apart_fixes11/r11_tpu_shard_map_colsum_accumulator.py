"""Per-shard column sums of activations for TPU, wrapped in `jax.shard_map`.

Each device reduces its rows over a sequential grid into a VMEM accumulator; the host-side
`psum` is left to the caller (the statistics feed a data-parallel running average).
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import NamedSharding, PartitionSpec as P

ROW_BLOCK = 8
LANES = 128
MESH = jax.sharding.AbstractMesh((2,), ("data",))


def _colsum_body(x_ref, o_ref):
  step = pl.program_id(0)
  acc = pl.get_global(pltpu.VMEM((ROW_BLOCK, LANES), jnp.float32))

  @pl.when(step == 0)
  def _init():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += x_ref[...].astype(jnp.float32)

  @pl.when(step == pl.num_programs(0) - 1)
  def _flush():
    o_ref[...] = acc[...]


def _local_colsum(x):
  rows = x.shape[0]
  return pl.pallas_call(
      _colsum_body,
      out_shape=jax.ShapeDtypeStruct((ROW_BLOCK, LANES), jnp.float32),
      grid=(rows // ROW_BLOCK,),
      in_specs=[pl.BlockSpec((ROW_BLOCK, LANES), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((ROW_BLOCK, LANES), lambda i: (0, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


@jax.jit
def sharded_colsum(x):
  return jax.shard_map(
      _local_colsum,
      mesh=MESH,
      in_specs=P("data"),
      out_specs=P("data"),
      check_vma=False,
  )(x)


def target():
  x = jax.ShapeDtypeStruct((64, LANES), jnp.bfloat16, sharding=NamedSharding(MESH, P("data")))
  return sharded_colsum, (x,), "tpu"
