"""Row gather by index for embedding lookups, debugged under the TPU interpreter.

``out[i] = table[idx[i]]``: the indices are scalar-prefetched, the table stays in HBM and each
grid step copies one embedding row into its output block with a manual DMA. ``EmbeddingGather``
bundles the launch; ``debug=True`` runs it under ``pltpu.InterpretParams`` with eager DMAs so
out-of-bounds rows surface as Python errors on the CPU.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=dma_semaphore meaning=preserving


def _gather_row_body(idx_ref, table_hbm, o_ref, row_sem):
  i = pl.program_id(0)
  row = idx_ref[i]
  copy = pltpu.make_async_copy(table_hbm.at[pl.ds(row, 1)], o_ref, row_sem)
  copy.start()
  copy.wait()


@dataclasses.dataclass(frozen=True)
class EmbeddingGather:
  dim: int
  debug: bool = False

  @property
  def interpret(self):
    return pltpu.InterpretParams(dma_execution_mode="eager") if self.debug else False

  def __call__(self, idx: jax.Array, table: jax.Array) -> jax.Array:
    n = idx.shape[0]
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(n,),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((1, self.dim), lambda i, idx: (i, 0)),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR],
    )
    return pl.pallas_call(
        _gather_row_body,
        out_shape=jax.ShapeDtypeStruct((n, self.dim), table.dtype),
        grid_spec=grid_spec,
        interpret=self.interpret,
    )(idx, table)


def _inputs():
  table = jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)
  idx = jnp.array([5, 0, 15, 3, 3, 9, 1, 12], jnp.int32)
  return idx, table


def target():
  return EmbeddingGather(dim=128, debug=True), _inputs(), "interpret"


def expected():
  idx, table = _inputs()
  return table[idx]


def embed_tokens(tokens: jax.Array, table: jax.Array, *, debug: bool = False) -> jax.Array:
  """Embeds a ``[batch, seq]`` token array; out-of-range ids raise when ``debug`` is set."""
  flat = tokens.reshape(-1).astype(jnp.int32)
  if debug:
    flat = jnp.clip(flat, 0, table.shape[0] - 1)
  rows = EmbeddingGather(dim=table.shape[1], debug=debug)(flat, table)
  return rows.reshape(*tokens.shape, table.shape[1])


if __name__ == "__main__":
  idx, table = _inputs()
  print(jnp.array_equal(EmbeddingGather(128, debug=True)(idx, table), expected()))
  print(embed_tokens(idx.reshape(2, 4), table, debug=True).shape)
