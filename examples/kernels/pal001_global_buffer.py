"""PAL001: `pl.get_global` asked for a shared-memory buffer instead of a semaphore.

The kernel stages each row of its input in shared memory (SMEM) before scaling it. Its
author used `pl.get_global` to get that staging buffer, as if it allocated any kind of
memory. On Mosaic GPU it only allocates global semaphores
(`plgpu.SemaphoreType.REGULAR`); JAX rejects everything else when the kernel is lowered:

    NotImplementedError: get_global only supports semaphores, got Ref<smem>{float32[128]}

The error carries no line of this file. pallas-lsp reports PAL001 on the `pl.get_global`
line as the code is written.

Fix: allocate the buffer as scratch, `plgpu.kernel(..., scratch_types=[plgpu.SMEM((COLS,),
jnp.float32)])`, and take it as the body's last parameter (or use `pl.run_scoped`).
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS, COLS = 4, 128
X = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)


def scale_rows(x_ref, o_ref):
  row = lax.axis_index("row")
  staging = pl.get_global(plgpu.SMEM((COLS,), jnp.float32))  # wrong: not a semaphore
  staging[...] = x_ref[row]
  o_ref[row] = staging[...] * 0.5


# pallas-lsp: trace(f32[4,128])
scale = plgpu.kernel(scale_rows, out_type=X, grid=(ROWS,), grid_names=("row",))


def target():
  return scale, (X,), "cuda"
