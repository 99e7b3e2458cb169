"""PAL023: a TPU kernel asks for its barrier semaphore, but its compiler parameters give no
`collective_id`.

`pltpu.get_barrier_semaphore()` is the semaphore XLA sets aside for the kernel's `collective_id`;
`tpu_params()` makes the kernel's `pltpu.CompilerParams` without one, and lowering for a TPU fails:

    ValueError: collective_id has to be specified when using a custom barrier (cannot auto-allocate
    without lowering context)

Fix: `collective_id=0` (any id no other kernel with another synchronisation pattern uses) in
`tpu_params()`.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def tpu_params():
  return pltpu.CompilerParams(vmem_limit_bytes=32 << 20)  # wrong: no collective_id


def body(x_ref, o_ref):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[8,128])
def run(x):
  return pl.pallas_call(body, out_shape=X, compiler_params=tpu_params())(x)


def target():
  return run, (X,), "tpu"
