"""PAL007: `pl.run_scoped` of a semaphore meant to be shared by every block of the grid.

`pl.run_scoped` allocates per block (or per thread); a semaphore collective over the grid's
axis is a global one, which only `pl.get_global` allocates. JAX refuses it at lowering:

    ValueError: Only thread-collective allocations are supported in run_scoped. To allocate global
    semaphores, use pl.get_global.

Fix: `sem = pl.get_global(plgpu.SemaphoreType.REGULAR)`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def exchange(sem):
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)

  pl.run_scoped(exchange, plgpu.SemaphoreType.REGULAR, collective_axes="blocks")  # wrong: over the grid


# pallas-lsp: trace(f32[128])
exchange_all = plgpu.kernel(body, out_type=X, grid=(4,), grid_names=("blocks",))


def target():
  return exchange_all, (X,), "cuda"
