"""Kernel-variant generator used by the exploration notebook (r15_nbv_explore.py).

`make_pooling_kernel(kind)` builds a Pallas kernel that pools each row block into a
running statistic carried across the sequential grid: "sum" or "max". Interpreted on the
CPU through `pltpu.InterpretParams()` while the notebook runs on a workstation.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

WIDTH = 128
POOL_OPS = {
    "sum": (jnp.add, 0.0),
    "max": (jnp.maximum, -jnp.inf),
}


def _pool_body(x_ref, o_ref, *, kind, block_rows):
  op, init = POOL_OPS[kind]
  running = pl.get_global(pltpu.VMEM((1, WIDTH), jnp.float32))

  @pl.when(pl.program_id(0) == 0)
  def _():
    running[...] = jnp.full(running.shape, init, jnp.float32)

  for r in range(block_rows):
    running[...] = op(running[...], x_ref[pl.ds(r, 1), :])

  @pl.when(pl.program_id(0) == pl.num_programs(0) - 1)
  def _():
    o_ref[...] = running[...]


def make_pooling_kernel(kind, *, block_rows=8, interpret=None):
  if interpret is None:
    interpret = pltpu.InterpretParams() if jax.default_backend() != "tpu" else False

  def pool(x):
    return pl.pallas_call(
        functools.partial(_pool_body, kind=kind, block_rows=block_rows),
        out_shape=jax.ShapeDtypeStruct((1, WIDTH), jnp.float32),
        grid=(x.shape[0] // block_rows,),
        in_specs=[pl.BlockSpec((block_rows, WIDTH), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, WIDTH), lambda i: (0, 0)),
        interpret=interpret,
    )(x)

  pool.__name__ = f"pool_{kind}"
  return pool


def all_variants():
  for kind in POOL_OPS:
    yield kind, make_pooling_kernel(kind)
