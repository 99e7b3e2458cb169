"""PAL011: under the TPU interpreter, a barrier semaphore's `collective_id` collides with the
ids the interpreter gives the kernel's own semaphores (2000 and up).

`collective_id=2000` is the id the TPU interpreter gives `sem`, the kernel's scratch semaphore;
the kernel fails when it runs:

    Semaphore 2000 occurs as both fixed-id and internal.

Fix: a `collective_id` below 2000 (compiled for a TPU, any id works).
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def body(x_ref, o_ref, sem):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(body, out_shape=X, scratch_shapes=[pltpu.SemaphoreType.REGULAR],
                      compiler_params=pltpu.CompilerParams(collective_id=2000),  # wrong: the interpreter's id
                      interpret=pltpu.InterpretParams())


def run(x):
  return copy(x)


def target():
  return run, (jnp.zeros((8, 128), jnp.float32),), "interpret"
