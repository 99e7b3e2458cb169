"""PAL024: a TPU kernel keeps a running column max in an SMEM scratch buffer and writes it as an
array.

SMEM holds scalars: Mosaic TPU reads and writes it one element at a time, and lowering fails:

    ValueError: Can only store scalars to SMEM

Fix: `pltpu.VMEM((1, 128), jnp.float32)` for the accumulator.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((64, 128), jnp.float32)


def colmax(x_ref, o_ref, running):
  @pl.when(pl.program_id(0) == 0)
  def _():
    running[...] = jnp.full(running.shape, -jnp.inf, jnp.float32)

  running[...] = jnp.maximum(running[...], jnp.max(x_ref[...], axis=0, keepdims=True))
  o_ref[...] = jnp.broadcast_to(running[...], o_ref.shape)


# pallas-lsp: trace(f32[64,128])
def run(x):
  return pl.pallas_call(
      colmax, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(8,),
      in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))], out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
      scratch_shapes=[pltpu.SMEM((1, 128), jnp.float32)],  # wrong: SMEM holds scalars
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(x)


def target():
  return run, (X,), "tpu"
