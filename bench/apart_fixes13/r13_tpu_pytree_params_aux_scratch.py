"""Exponential moving average of activations on TPU with kernel params as a pytree.

`EmaParams` is registered as a pytree so it can cross `jax.jit`: the decay is a leaf
(traced), the block layout is aux data (static) and carries the accumulator type.
"""

# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@jax.tree_util.register_pytree_node_class
class EmaParams:
  def __init__(self, decay, block_rows: int = 8, block_cols: int = 256):
    self.decay = decay
    self.block_rows = block_rows
    self.block_cols = block_cols

  @property
  def carry_type(self):
    return pltpu.VMEM((self.block_rows, self.block_cols), jnp.float32)

  def tree_flatten(self):
    return (self.decay,), (self.block_rows, self.block_cols)

  @classmethod
  def tree_unflatten(cls, aux, leaves):
    return cls(leaves[0], *aux)


def _ema_kernel(params, decay_ref, x_ref, o_ref):
  t = pl.program_id(1)
  carry = pl.get_global(params.carry_type)

  @pl.when(t == 0)
  def _():
    carry[...] = x_ref[0].astype(jnp.float32)

  d = decay_ref[0]
  carry[...] = d * carry[...] + (1.0 - d) * x_ref[0].astype(jnp.float32)
  o_ref[0] = carry[...].astype(o_ref.dtype)


@jax.jit
def ema_over_time(x, params: EmaParams):
  steps, rows, cols = x.shape
  br, bc = params.block_rows, params.block_cols
  decay = jnp.reshape(params.decay, (1,)).astype(jnp.float32)
  return pl.pallas_call(
      lambda *refs: _ema_kernel(params, *refs),
      grid=(cols // bc, steps),
      in_specs=[
          pl.BlockSpec(memory_space=pltpu.SMEM),
          pl.BlockSpec((1, br, bc), lambda c, t: (t, 0, c)),
      ],
      out_specs=pl.BlockSpec((1, br, bc), lambda c, t: (t, 0, c)),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(decay, x)


def target():
  params = EmaParams(jax.ShapeDtypeStruct((), jnp.float32))
  return ema_over_time, (jax.ShapeDtypeStruct((16, 8, 512), jnp.float32), params), "tpu"
