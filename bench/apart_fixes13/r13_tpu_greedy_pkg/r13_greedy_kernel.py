"""Greedy decoding kernel for TPU: row-wise max and first argmax over vocab blocks."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

_BIG = 2**30


def _running_best(rows: int):
  best_val = pl.get_global(pltpu.VMEM((rows, 1), jnp.float32))
  best_idx = pl.get_global(pltpu.VMEM((rows, 1), jnp.int32))
  return best_val, best_idx


def greedy_kernel(block_rows: int, block_vocab: int, logits_ref, tok_ref):
  v = pl.program_id(1)
  best_val, best_idx = _running_best(block_rows)

  @pl.when(v == 0)
  def _():
    best_val[...] = jnp.full(best_val.shape, -jnp.inf, jnp.float32)
    best_idx[...] = jnp.zeros(best_idx.shape, jnp.int32)

  x = logits_ref[...].astype(jnp.float32)
  m = jnp.max(x, axis=1, keepdims=True)
  cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1) + v * block_vocab
  idx = jnp.min(jnp.where(x == m, cols, _BIG), axis=1, keepdims=True)
  better = m > best_val[...]
  best_idx[...] = jnp.where(better, idx, best_idx[...])
  best_val[...] = jnp.maximum(m, best_val[...])

  @pl.when(v == pl.num_programs(1) - 1)
  def _():
    tok_ref[...] = best_idx[...]
