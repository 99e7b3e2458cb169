"""A scale table staged in SMEM scratch and used as an array; the scratch list is a local name (compiled for a
TPU)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _scaled(x_ref, o_ref, table):
  table[...] = jnp.full(table.shape, 0.5, table.dtype)
  o_ref[...] = x_ref[...] * table[...]


def scaled(x):
  scratch = [pltpu.VMEM((8, 128), jnp.float32)]
  return pl.pallas_call(_scaled, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), scratch_shapes=scratch,
                        compiler_params=pltpu.CompilerParams())(x)


def target():
  return scaled, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"
