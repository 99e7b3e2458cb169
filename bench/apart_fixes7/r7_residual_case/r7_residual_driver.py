"""Transformer block epilogue built on the `r7_respkg` package: attention residual then MLP residual.

The package keeps its tile plan in `_config.py` and its kernel in `_kernel.py`, and re-exports both
from `__init__.py`; this module is the user of the package, as a model file would be.
"""

# fix-rate: kind=barrier_scratch meaning=preserving

from __future__ import annotations

import jax
import jax.numpy as jnp

import r7_respkg

HIDDEN = 256
CONFIG = r7_respkg.ResidualConfig(block_rows=64, hidden=HIDDEN, residual_scale=0.5)


@jax.jit
def block_epilogue(x: jax.Array, attn_out: jax.Array, mlp_out: jax.Array) -> jax.Array:
  h = r7_respkg.scaled_residual_add(x, attn_out, CONFIG)
  return r7_respkg.scaled_residual_add(h, mlp_out, CONFIG)


def target():
  arg = jax.ShapeDtypeStruct((512, HIDDEN), jnp.bfloat16)
  return block_epilogue, (arg, arg, arg), "cuda"
