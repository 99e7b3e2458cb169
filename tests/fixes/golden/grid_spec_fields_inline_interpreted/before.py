"""Gather rows picked by a prefetched index table; the block specs and the staging tile sit beside an inline
PrefetchScalarGridSpec, run by the TPU interpreter."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, LANES = 8, 128


def gather_body(idx_ref, x_ref, o_ref, stage_ref):
  stage_ref[...] = x_ref[...] * 2.0
  o_ref[...] = stage_ref[...]


def gather_rows(idx, x):
  n = idx.shape[0]
  return pl.pallas_call(
      gather_body,
      out_shape=jax.ShapeDtypeStruct((n * ROWS, LANES), x.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(n,)),
      in_specs=[pl.BlockSpec((ROWS, LANES), lambda i, idx: (idx[i], 0))],
      out_specs=pl.BlockSpec((ROWS, LANES), lambda i, idx: (i, 0)),
      scratch_shapes=(pltpu.VMEM((ROWS, LANES), jnp.float32),),
      interpret=pltpu.InterpretParams(),
  )(idx, x)


def target():
  x = jnp.arange(4 * ROWS * LANES, dtype=jnp.float32).reshape(4 * ROWS, LANES)
  return gather_rows, (jnp.array([3, 1], jnp.int32), x), "interpret"


def expected():
  x = jnp.arange(4 * ROWS * LANES, dtype=jnp.float32).reshape(4 * ROWS, LANES)
  return jnp.concatenate([x[3 * ROWS:4 * ROWS], x[ROWS:2 * ROWS]]) * 2.0
