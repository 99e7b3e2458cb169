"""PAL003: `pl.get_global` in a kernel whose backend cannot lower it (here a TPU TensorCore).

Only Mosaic GPU (`plgpu.kernel`, `pl.kernel` over a `plgpu.Mesh`) has global semaphores. This
`pl.pallas_call` is compiled for a TPU (its `pltpu.CompilerParams` say so), and JAX stops at
lowering:

    NotImplementedError: Unimplemented primitive in Pallas TPU lowering for tc: get_global. ...

Fix: a semaphore for this kernel alone goes in its own scratch,
`scratch_shapes=[pltpu.SemaphoreType.REGULAR]`, taken as the body's last parameter.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def copy_kernel(x_ref, o_ref):
  sem = pl.get_global(pltpu.SemaphoreType.REGULAR)  # wrong: TPU has no get_global
  o_ref[...] = x_ref[...]
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)


# pallas-lsp: trace(f32[8,128])
copy = pl.pallas_call(copy_kernel, out_shape=X, grid=(1,),
                      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)))


def target():
  return copy, (X,), "tpu"
