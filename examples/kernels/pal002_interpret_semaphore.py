"""PAL002: a kernel that uses a global semaphore, run in interpret mode.

To try the kernel on a machine without a GPU, its author turned on interpret mode with
`interpret=plgpu.InterpretGPUParams()`. But `pl.get_global` cannot be interpreted: JAX fails
when the kernel is first run with

    TypeError: No ir_type_handler for aval type: <class 'jax._src.state.types.AbstractRef'>

from deep inside the HLO lowering, never naming the `pl.get_global` line. (JAX has a clear
message for this, `get_global discharge is not supported in interpret mode.`, but never
reaches it.) pallas-lsp reports PAL002 on the `pl.get_global` line, with the `interpret=`
argument that causes it. `interpret=True` fails the same way at `pl.get_global`, but for
a kernel with a grid JAX 0.12 stops even earlier, at `lax.axis_index`
(`NameError: Found an unbound axis name: block`), which is why this gridded kernel uses
`plgpu.InterpretGPUParams()`.

Fix: test this kernel compiled, on a GPU: good_semaphore_ordering.py is the same kernel without
`interpret=`. A semaphore that only synchronises work within one block can be scratch
instead (`scratch_types=[plgpu.SemaphoreType.REGULAR]`), which `interpret=True` supports
(under `plgpu.InterpretGPUParams()` JAX 0.12 cannot run a scratch semaphore either:
`NotImplementedError: nan + semaphore`); this one orders two blocks, so it has to be global.
"""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

HALF = 128
X = jax.ShapeDtypeStruct((2, HALF), jnp.float32)


def ordered_halves(x_ref, o_ref):
  block = lax.axis_index("block")
  first_half_done = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(block == 0)
  def _():
    o_ref[0] = x_ref[0] * 2.0
    pl.semaphore_signal(first_half_done)

  @pl.when(block == 1)
  def _():
    pl.semaphore_wait(first_half_done)
    o_ref[1] = x_ref[1] * 2.0


# pallas-lsp: trace(f32[2,128])
ordered_double = plgpu.kernel(
    ordered_halves, out_type=X, grid=(2,), grid_names=("block",),
    interpret=plgpu.InterpretGPUParams())


def target():
  return ordered_double, (jnp.ones((2, HALF), jnp.float32),), "interpret"
