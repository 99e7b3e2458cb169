"""PAL010: a TPU copy given a semaphore's value (`src[...]`) where the semaphore ref was meant.

`src[...]` reads the semaphore's count; a copy signals the semaphore itself. JAX refuses it
while it traces the kernel:

    ValueError: DMA source semaphore must be a Ref.

Fix: drop `src_sem` (a local copy takes none on the TensorCore, PAL017; `src_sem=src` fails there).
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
ANY = pl.BlockSpec(memory_space=pl.ANY)


def copy_kernel(x_hbm, o_hbm, sem, src):
  pltpu.async_copy(x_hbm, o_hbm, sem, src_sem=src[...]).wait()  # wrong: the ref, src, was meant


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, in_specs=[ANY], out_specs=ANY,
                      scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA],
                      compiler_params=pltpu.CompilerParams())


def target():
  return copy, (X,), "tpu"
