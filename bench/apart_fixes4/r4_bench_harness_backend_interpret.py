"""Embedding row gather (token ids -> rows), with the micro-benchmark harness the perf dashboard runs.

The table stays in HBM; each selected row is copied into the output block by a DMA. The harness runs
the kernel interpreted when the default backend is not a TPU, so the same script works on a laptop.
"""
# fix-rate: kind=scratch meaning=preserving

import argparse
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _gather_rows_kernel(ids_ref, table_hbm, out_ref, *, num_ids: int):
  sem = pl.get_global(pltpu.SemaphoreType.DMA)

  def fetch(i, carry):
    row = ids_ref[i]
    copy = pltpu.make_async_copy(table_hbm.at[pl.ds(row, 1)], out_ref.at[pl.ds(i, 1)], sem)
    copy.start()
    copy.wait()
    return carry

  jax.lax.fori_loop(0, num_ids, fetch, 0)


@functools.partial(jax.jit, static_argnames=("interpret",))
def gather_rows(ids: jax.Array, table: jax.Array, interpret: bool = False) -> jax.Array:
  num_ids = ids.shape[0]
  grid_spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=1,
      grid=(1,),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((num_ids, table.shape[1]), lambda i, ids: (0, 0)),
  )
  return pl.pallas_call(
      functools.partial(_gather_rows_kernel, num_ids=num_ids),
      grid_spec=grid_spec,
      out_shape=jax.ShapeDtypeStruct((num_ids, table.shape[1]), table.dtype),
      interpret=interpret,
  )(ids, table)


def interpret_for_backend() -> bool:
  return jax.default_backend() != "tpu"


VOCAB, WIDTH, NUM_IDS = 64, 128, 8


def _inputs():
  table = jnp.arange(VOCAB * WIDTH, dtype=jnp.float32).reshape(VOCAB, WIDTH)
  ids = jnp.array([3, 17, 0, 63, 5, 5, 42, 9], dtype=jnp.int32)
  return ids, table


def target():
  fn = functools.partial(gather_rows, interpret=interpret_for_backend())
  return fn, _inputs(), "interpret"


def expected():
  ids, table = _inputs()
  return table[ids]


def _bench(fn, *args, iters: int) -> float:
  jax.block_until_ready(fn(*args))
  start = time.perf_counter()
  for _ in range(iters):
    out = fn(*args)
  jax.block_until_ready(out)
  return (time.perf_counter() - start) / iters


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--iters", type=int, default=20)
  args = parser.parse_args()
  interpret = interpret_for_backend()
  print(f"backend={jax.default_backend()} interpret={interpret}")
  ids, table = _inputs()
  got = gather_rows(ids, table, interpret=interpret)
  np.testing.assert_allclose(np.asarray(got), np.asarray(expected()))
  secs = _bench(functools.partial(gather_rows, interpret=interpret), ids, table, iters=args.iters)
  print(f"gather_rows: {secs * 1e6:.1f} us/iter")
