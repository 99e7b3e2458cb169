"""Split-K partial sums with a completion handshake (Mosaic GPU).

Each block of the ``splits`` grid folds one K slice of ``x`` into its own row of the partial
output; the last step of the reduction (the block with index 0) must not publish the
``ready`` marker before all other blocks have written theirs, so the other blocks bump a
grid-wide counter semaphore and block 0 waits for it.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: clean


class SplitKPlan(NamedTuple):
  splits: int
  rows: int
  lanes: int

  @property
  def others(self) -> int:
    """How many blocks report to block 0."""
    return self.splits - 1


TUNING = {
    (512, 128): SplitKPlan(splits=4, rows=128, lanes=128),
    (1024, 128): SplitKPlan(splits=8, rows=128, lanes=128),
}


def _plan_for(k: int, n: int) -> SplitKPlan:
  try:
    return TUNING[(k, n)]
  except KeyError:
    raise ValueError(f"no split-K plan tuned for K={k}, N={n}") from None


def _partial_body(x_ref, o_ref, *, plan: SplitKPlan):
  split = jax.lax.axis_index("splits")
  rows = pl.ds(split * plan.rows, plan.rows)
  o_ref[rows, :] = x_ref[rows, :] * 2.0 + 1.0

  done = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(split != 0)
  def _report():
    pl.semaphore_signal(done)

  @pl.when(split == 0)
  def _collect():
    # Every other split has stored its partial rows: block 0 may now finish.
    pl.semaphore_wait(done, plan.others)
    o_ref[rows, :] = o_ref[rows, :] * (1.0 / plan.splits)


@jax.jit
def split_k_partials(x: jax.Array) -> jax.Array:
  plan = _plan_for(*x.shape)
  return plgpu.kernel(
      functools.partial(_partial_body, plan=plan),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(plan.splits,),
      grid_names=("splits",),
  )(x)


def target():
  return split_k_partials, (jax.ShapeDtypeStruct((512, 128), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.arange(512 * 128, dtype=jnp.float32).reshape(512, 128)
  print(split_k_partials(x)[::128, 0])
