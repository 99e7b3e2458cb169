"""Column sums of a (tokens, features) activation on TPU, for feature statistics in a calibration pass.

The accumulator's shape and dtype are not written by hand: `jax.eval_shape` of the reference reduction on
one block gives them, so a change of the promotion rule (say, bf16 -> f32) follows automatically.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_TOKENS = 256
BLOCK_FEATURES = 256


def _block_partial(block):
  """The reference reduction of one block (also used by tests as the oracle)."""
  return jnp.sum(block.astype(jnp.float32), axis=0, keepdims=True)


def accumulator_type(block_shape, dtype):
  return jax.eval_shape(_block_partial, jax.ShapeDtypeStruct(block_shape, dtype))


def _colsum_body(x_ref, o_ref):
  step = pl.program_id(1)
  acc_aval = accumulator_type(x_ref.shape, x_ref.dtype)
  acc = pl.get_global(pltpu.VMEM(acc_aval.shape, acc_aval.dtype))

  @pl.when(step == 0)
  def _zero():
    acc[...] = jnp.zeros(acc_aval.shape, acc_aval.dtype)

  acc[...] += jnp.sum(x_ref[...].astype(acc_aval.dtype), axis=0, keepdims=True)

  @pl.when(step == pl.num_programs(1) - 1)
  def _write():
    o_ref[...] = acc[...].astype(o_ref.dtype)


def column_sums(x):
  tokens, features = x.shape
  grid = (features // BLOCK_FEATURES, tokens // BLOCK_TOKENS)
  return pl.pallas_call(
      _colsum_body,
      out_shape=jax.ShapeDtypeStruct((1, features), jnp.float32),
      grid=grid,
      in_specs=[pl.BlockSpec((BLOCK_TOKENS, BLOCK_FEATURES), lambda f, t: (t, f))],
      out_specs=pl.BlockSpec((1, BLOCK_FEATURES), lambda f, t: (0, f)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)


def target():
  return column_sums, (jnp.ones((1024, 512), jnp.bfloat16),), "tpu"
