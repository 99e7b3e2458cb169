"""Row gather by index table, runnable on CPU hosts (Pallas TPU kernel).

``gather_rows(table, ids)`` returns ``table[ids]``: each grid step copies one
row block of the HBM table, chosen by the scalar-prefetched ``ids``, through a
scoped VMEM buffer. The module defaults to the TPU interpreter whenever the
default backend is the CPU, so the embedding tests and the notebook demo run on
laptops unchanged.
"""

# fix-rate: kind=semaphore_kind meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROW_BLOCK = 8
INTERPRET = jax.default_backend() == "cpu"


def _gather_kernel(ids_ref, table_hbm, o_ref):
  row = ids_ref[pl.program_id(0)]

  def fetch(block_vmem, sem):
    copy = pltpu.make_async_copy(
        table_hbm.at[pl.ds(row * ROW_BLOCK, ROW_BLOCK)], block_vmem, sem
    )
    copy.start()
    copy.wait()
    o_ref[...] = block_vmem[...]

  pl.run_scoped(
      fetch,
      pltpu.VMEM((ROW_BLOCK, table_hbm.shape[1]), table_hbm.dtype),
      pltpu.SemaphoreType.REGULAR,
  )


@functools.partial(jax.jit, static_argnames=("interpret",))
def gather_rows(table, ids, interpret: bool = INTERPRET):
  """``table``: ``(num_blocks * ROW_BLOCK, d)``; ``ids``: block indices."""
  d = table.shape[1]
  return pl.pallas_call(
      _gather_kernel,
      out_shape=jax.ShapeDtypeStruct((ids.shape[0] * ROW_BLOCK, d), table.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(ids.shape[0],),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec((ROW_BLOCK, d), lambda i, ids: (i, 0)),
      ),
      interpret=interpret,
  )(ids, table)


def _table():
  return jnp.arange(6 * ROW_BLOCK * 128, dtype=jnp.float32).reshape(6 * ROW_BLOCK, 128)


IDS = (4, 0, 5, 2)


def target():
  return gather_rows, (_table(), jnp.array(IDS, jnp.int32)), "interpret"


def expected():
  table = np.asarray(_table()).reshape(6, ROW_BLOCK, 128)
  return table[list(IDS)].reshape(-1, 128)


if __name__ == "__main__":
  print(np.array_equal(np.asarray(gather_rows(_table(), jnp.array(IDS, jnp.int32))), expected()))
