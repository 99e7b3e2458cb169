"""Per-channel dequantisation of an int8 weight matrix on the TPU TensorCore, as a mesh kernel.

`dequantize(w_int8, scales)` returns `w_int8 * scales[None, :]` in bfloat16. The kernel is written
with `pl.kernel` over a TensorCore mesh (one program per core) rather than a `pallas_call` grid: each
core walks its own range of row chunks and moves every chunk HBM -> VMEM -> HBM with explicit DMAs,
which keeps the int8 chunk and its bfloat16 result in VMEM only as long as needed.

The VMEM plan for a weight shape is built once per shape by the `lru_cache`d `_vmem_plan`.
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

CHUNK_ROWS = 256


@functools.lru_cache(maxsize=64)
def _vmem_plan(cols: int) -> tuple:
  """int8 chunk, bf16 chunk, scales row."""
  return (
      pltpu.VMEM((CHUNK_ROWS, cols), jnp.int8),
      pltpu.VMEM((CHUNK_ROWS, cols), jnp.bfloat16),
      pltpu.VMEM((1, cols), jnp.float32),
  )


@functools.lru_cache(maxsize=None)
def _core_mesh(num_cores: int):
  return pltpu.create_tensorcore_mesh("core", num_cores=num_cores)


def _dequant_body(w_hbm, s_hbm, o_hbm, w_vmem, o_vmem, s_vmem, *, chunks_per_core: int):
  core = jax.lax.axis_index("core")
  sem = pl.get_global(pltpu.SemaphoreType.DMA)

  load_scales = pltpu.make_async_copy(s_hbm, s_vmem, sem)
  load_scales.start()
  load_scales.wait()

  @pl.loop(0, chunks_per_core)
  def _chunk(i):
    rows = pl.ds((core * chunks_per_core + i) * CHUNK_ROWS, CHUNK_ROWS)
    load = pltpu.make_async_copy(w_hbm.at[rows], w_vmem, sem)
    load.start()
    load.wait()
    o_vmem[...] = (w_vmem[...].astype(jnp.float32) * s_vmem[...]).astype(o_vmem.dtype)
    store = pltpu.make_async_copy(o_vmem, o_hbm.at[rows], sem)
    store.start()
    store.wait()


def dequantize(w: jax.Array, scales: jax.Array, *, num_cores: int = 1) -> jax.Array:
  rows, cols = w.shape
  if w.dtype != jnp.int8:
    raise TypeError(f"expected int8 weights, got {w.dtype}")
  if rows % (CHUNK_ROWS * num_cores):
    raise ValueError(f"{rows} rows do not split into {num_cores} cores x {CHUNK_ROWS}-row chunks")
  kernel = pl.kernel(
      functools.partial(_dequant_body, chunks_per_core=rows // (CHUNK_ROWS * num_cores)),
      out_type=jax.ShapeDtypeStruct((rows, cols), jnp.bfloat16),
      mesh=_core_mesh(num_cores),
      scratch_types=list(_vmem_plan(cols)),
  )
  return kernel(w, scales.reshape(1, cols).astype(jnp.float32))


def target():
  w = jax.ShapeDtypeStruct((1024, 512), jnp.int8)
  s = jax.ShapeDtypeStruct((512,), jnp.float32)
  return dequantize, (w, s), "tpu"
