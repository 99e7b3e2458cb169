"""Layer-stacked feature centering, scanned over layers (maxtext-style `nn.scan` stack, here `lax.scan`).

Each layer computes `h <- (h - mean_rows(h)) * scale[l]`; the column means come from a Pallas TPU
kernel that sums row blocks across a sequential grid. `PALLAS_INTERPRET` in the model config routes the
kernel through the interpreter on hosts without a TPU.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  num_layers: int = 3
  block_rows: int = 8
  pallas_interpret: bool = jax.default_backend() != "tpu"


def _colsum_kernel(h_ref, o_ref, *, rows: int):
  i = pl.program_id(0)
  colsum = pl.get_global(pltpu.VMEM((8, h_ref.shape[1]), jnp.float32))

  @pl.when(i == 0)
  def _init():
    colsum[...] = jnp.zeros_like(colsum)

  colsum[...] += jnp.broadcast_to(jnp.sum(h_ref[...], axis=0, keepdims=True), colsum.shape)

  @pl.when(i == pl.num_programs(0) - 1)
  def _mean():
    o_ref[...] = colsum[...] / rows


def column_mean(h: jax.Array, cfg: ModelConfig) -> jax.Array:
  rows, cols = h.shape
  out = pl.pallas_call(
      functools.partial(_colsum_kernel, rows=rows),
      out_shape=jax.ShapeDtypeStruct((8, cols), jnp.float32),
      grid=(rows // cfg.block_rows,),
      in_specs=[pl.BlockSpec((cfg.block_rows, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, cols), lambda i: (0, 0)),
      interpret=cfg.pallas_interpret,
  )(h)
  return out[:1]


def centered_stack(h: jax.Array, scales: jax.Array, cfg: ModelConfig) -> jax.Array:
  def layer(carry, scale):
    return (carry - column_mean(carry, cfg)) * scale, None

  out, _ = jax.lax.scan(layer, h, scales)
  return out


def _inputs(rows=32, cols=128):
  h = (jnp.arange(rows * cols, dtype=jnp.float32).reshape(rows, cols) % 7)
  scales = jnp.array([2.0, 0.5, 4.0], jnp.float32)
  return h, scales


def expected():
  h, scales = (np.asarray(a) for a in _inputs())
  for s in scales:
    h = (h - h.mean(axis=0, keepdims=True)) * s
  return h


def target():
  cfg = ModelConfig(pallas_interpret=True)
  return functools.partial(centered_stack, cfg=cfg), _inputs(), "interpret"
