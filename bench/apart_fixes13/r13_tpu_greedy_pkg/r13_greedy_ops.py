"""`greedy_tokens(logits)`: the next token of every sequence, tuned per vocabulary size."""

# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import r13_greedy_kernel as kernel

# vocab -> (block_rows, block_vocab), measured on v5e.
_TUNED_BLOCKS = {32768: (8, 2048), 128256: (8, 4096), 152064: (16, 4096)}


def _blocks(vocab: int) -> tuple[int, int]:
  return _TUNED_BLOCKS.get(vocab, (8, 1024))


@jax.jit
def greedy_tokens(logits):
  rows, vocab = logits.shape
  br, bv = _blocks(vocab)
  out = pl.pallas_call(
      functools.partial(kernel.greedy_kernel, br, bv),
      grid=(rows // br, vocab // bv),
      in_specs=[pl.BlockSpec((br, bv), lambda r, v: (r, v))],
      out_specs=pl.BlockSpec((br, 1), lambda r, v: (r, 0)),
      out_shape=jax.ShapeDtypeStruct((rows, 1), jnp.int32),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(logits)
  return out[:, 0]


def target():
  return greedy_tokens, (jax.ShapeDtypeStruct((16, 32768), jnp.bfloat16),), "tpu"
