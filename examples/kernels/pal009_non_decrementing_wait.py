"""PAL009: `pl.semaphore_wait(..., decrement=False)` in a TPU kernel.

The TPU interpreter (`interpret=pltpu.InterpretParams()`, how TPU kernels are tried on a
laptop) refuses it when the kernel runs:

    NotImplementedError: Non-decrementing wait is not supported.

and compiled for a TPU, JAX lowers it as an ordinary, decrementing wait. Fix: wait with
`decrement=True` (the default) and signal the count back if others wait on it too.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_ref, o_ref, sem):
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem, 1, decrement=False)  # wrong on TPU


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                      interpret=pltpu.InterpretParams())


def target():
  return copy, (jnp.zeros((8, 128), jnp.float32),), "interpret"
