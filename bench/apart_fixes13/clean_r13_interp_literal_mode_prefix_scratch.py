"""Blockwise inclusive prefix sum (cumsum along rows) as a Pallas TPU kernel.

`ExecutionMode` is a `Literal`; `_INTERPRET_FOR_MODE` maps it to the `interpret=`
argument so CI (no TPU) and the TPU fleet run the same entry point.
"""

# fix-rate: clean

import functools
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ExecutionMode = Literal["compiled", "interpret"]
_INTERPRET_FOR_MODE: dict[str, bool] = {"compiled": False, "interpret": True}

BLOCK_ROWS = 8


def _prefix_kernel(x_ref, o_ref, carry):
  i = pl.program_id(0)

  @pl.when(i == 0)
  def _():
    carry[...] = jnp.zeros_like(carry)

  local = jnp.cumsum(x_ref[...].astype(jnp.float32), axis=0) + carry[...]
  o_ref[...] = local.astype(o_ref.dtype)
  carry[...] = local[-1:, :]


@functools.partial(jax.jit, static_argnames=("mode",))
def blocked_cumsum(x, mode: ExecutionMode = "compiled"):
  rows, cols = x.shape
  return pl.pallas_call(
      _prefix_kernel,
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0)),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_shapes=[pltpu.VMEM((1, cols), jnp.float32)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
      interpret=_INTERPRET_FOR_MODE[mode],
  )(x)


def _example():
  return (jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 7,)


def target():
  return functools.partial(blocked_cumsum, mode="interpret"), _example(), "interpret"


def expected():
  (x,) = _example()
  return np.cumsum(np.asarray(x), axis=0)


if __name__ == "__main__":
  mode: ExecutionMode = "compiled" if jax.default_backend() == "tpu" else "interpret"
  print(blocked_cumsum(*_example(), mode=mode)[-1, :4])
