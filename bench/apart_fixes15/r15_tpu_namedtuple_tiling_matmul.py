"""K-blocked projection for the probing head, tiled by a `NamedTuple` of block sizes.

The tiling table is keyed by (m, k, n). The kernel accumulates partial products in an f32
VMEM accumulator along the last ("arbitrary") grid axis and writes it back at the last step.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class Tiling(NamedTuple):
  bm: int
  bk: int
  bn: int

  def accumulator(self):
    return pltpu.VMEM((self.bm, self.bn), jnp.float32)

  def grid(self, m, k, n):
    return (m // self.bm, n // self.bn, k // self.bk)


TILINGS = {
    (256, 512, 256): Tiling(128, 256, 128),
    (512, 512, 512): Tiling(256, 256, 256),
}
DEFAULT = Tiling(128, 128, 128)


def _matmul_body(x_ref, w_ref, o_ref, *, tiling: Tiling):
  acc_ref = pl.get_global(tiling.accumulator())

  @pl.when(pl.program_id(2) == 0)
  def _zero():
    acc_ref[...] = jnp.zeros(acc_ref.shape, acc_ref.dtype)

  acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

  @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
  def _store():
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def probe_projection(x, w):
  (m, k), n = x.shape, w.shape[1]
  tiling = TILINGS.get((m, k, n), DEFAULT)
  return pl.pallas_call(
      functools.partial(_matmul_body, tiling=tiling),
      out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
      grid=tiling.grid(m, k, n),
      in_specs=[
          pl.BlockSpec((tiling.bm, tiling.bk), lambda i, j, kk: (i, kk)),
          pl.BlockSpec((tiling.bk, tiling.bn), lambda i, j, kk: (kk, j)),
      ],
      out_specs=pl.BlockSpec((tiling.bm, tiling.bn), lambda i, j, kk: (i, j)),
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "parallel", "arbitrary")
      ),
  )(x, w)


def target():
  x = jax.ShapeDtypeStruct((256, 512), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((512, 256), jnp.bfloat16)
  return probe_projection, (x, w), "tpu"


if __name__ == "__main__":
  x = jnp.ones((256, 512), jnp.bfloat16)
  print(probe_projection(x, jnp.ones((512, 256), jnp.bfloat16))[0, 0])
