"""PAL005: a semaphore array signalled whole, without `.at[i]`.

`sems` holds two semaphores (`SemaphoreType.REGULAR((2,))`); a signal or wait takes one of
them. JAX refuses the whole array while it traces the kernel:

    ValueError: Cannot signal on a non-()-shaped semaphore: (2,)

Fix: `pl.semaphore_signal(sems.at[0])`, one index per dimension.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def copy_body(x_ref, o_ref, sems):
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(sems)  # wrong: which of the two?


# pallas-lsp: trace(f32[128])
copy = plgpu.kernel(copy_body, out_type=X, scratch_types=[plgpu.SemaphoreType.REGULAR((2,))])


def target():
  return copy, (X,), "cuda"
