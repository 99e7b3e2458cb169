"""Gather one expert's weight rows from HBM into the output, with a manual DMA (Pallas TPU).

The launcher prepares the body's extra arguments (the row offset and the copy
semaphore) in a dict and binds them with `functools.partial(**extras)`.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_EXPERTS, ROWS_PER_EXPERT, D_MODEL = 4, 16, 256


def _gather_expert_body(w_hbm, o_vmem, *, first_row: int, rows: int, sem):
  copy = pltpu.make_async_copy(w_hbm.at[pl.ds(first_row, rows)], o_vmem, sem)
  copy.start()
  copy.wait()


def expert_rows(w: jax.Array, expert: int) -> jax.Array:
  extras = {
      "first_row": expert * ROWS_PER_EXPERT,
      "rows": ROWS_PER_EXPERT,
      "sem": pl.get_global(pltpu.SemaphoreType.DMA),
  }
  return pl.pallas_call(
      functools.partial(_gather_expert_body, **extras),
      out_shape=jax.ShapeDtypeStruct((ROWS_PER_EXPERT, D_MODEL), w.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
  )(w)


@functools.partial(jax.jit, static_argnames=("expert",))
def load_expert(w: jax.Array, expert: int) -> jax.Array:
  return expert_rows(w, expert)


def target():
  fn = functools.partial(load_expert, expert=2)
  return fn, (jax.ShapeDtypeStruct((NUM_EXPERTS * ROWS_PER_EXPERT, D_MODEL), jnp.float32),), "tpu"


def all_expert_rows(w: jax.Array) -> list[jax.Array]:
  """Debug helper: every expert's rows, one launch each (used by the weight-loading tests)."""
  return [load_expert(w, expert=e) for e in range(NUM_EXPERTS)]


def check_against_slices(w: jax.Array) -> None:
  for e, rows in enumerate(all_expert_rows(w)):
    want = w[e * ROWS_PER_EXPERT:(e + 1) * ROWS_PER_EXPERT]
    if not bool(jnp.all(rows == want)):
      raise AssertionError(f"expert {e} rows differ")


if __name__ == "__main__":
  w = jnp.arange(NUM_EXPERTS * ROWS_PER_EXPERT * D_MODEL, dtype=jnp.float32).reshape(-1, D_MODEL)
  print(load_expert(w, expert=1)[0, :4])
