"""Decoder layer-scale with a running per-token sum, behind a launch decorator (Pallas TPU).

`tpu_launch` is the op library's decorator that turns a body into a
`pallas_call` launcher; bodies declare their tiling once, next to the code.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TOKENS, HIDDEN = 64, 512
BT, BH = 8, 128


def tpu_launch(*, grid, in_specs: Sequence[pl.BlockSpec], out_specs, out_shape,
               semantics=("parallel", "arbitrary"), **extra) -> Callable:
  def decorate(body):
    launch = pl.pallas_call(
        body,
        out_shape=out_shape,
        grid=grid,
        in_specs=list(in_specs),
        out_specs=out_specs,
        compiler_params=pltpu.CompilerParams(dimension_semantics=semantics),
        **extra,
    )

    @functools.wraps(body)
    def call(*args):
      return launch(*args)

    return call

  return decorate


@tpu_launch(
    grid=(TOKENS // BT, HIDDEN // BH),
    in_specs=[pl.BlockSpec((BT, BH), lambda t, h: (t, h)), pl.BlockSpec((1, BH), lambda t, h: (0, h))],
    out_specs=[pl.BlockSpec((BT, BH), lambda t, h: (t, h)), pl.BlockSpec((BT, BH), lambda t, h: (t, 0))],
    out_shape=[jax.ShapeDtypeStruct((TOKENS, HIDDEN), jnp.float32),
               jax.ShapeDtypeStruct((TOKENS, BH), jnp.float32)],
)
def layer_scale(x_ref, gamma_ref, y_ref, rowsum_ref):
  h = pl.program_id(1)
  acc = pl.get_global(pltpu.VMEM((BT, BH), jnp.float32))

  @pl.when(h == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  y = x_ref[...] * gamma_ref[...]
  y_ref[...] = y
  acc[...] += y

  @pl.when(h == pl.num_programs(1) - 1)
  def _():
    rowsum_ref[...] = acc[...]


@jax.jit
def scaled_with_stats(x, gamma):
  y, partial = layer_scale(x, gamma)
  return y, partial.sum(axis=1)


def target():
  args = (jax.ShapeDtypeStruct((TOKENS, HIDDEN), jnp.float32), jax.ShapeDtypeStruct((1, HIDDEN), jnp.float32))
  return scaled_with_stats, args, "tpu"


if __name__ == "__main__":
  x = jnp.ones((TOKENS, HIDDEN), jnp.float32)
  print(scaled_with_stats(x, jnp.full((1, HIDDEN), 0.1))[1][:4])
