"""PAL025: a Mosaic GPU kernel that loads its tile with a TMA copy, interpreted with interpret=True.

interpret=True runs the kernel through Pallas's generic interpreter, which has no rule for Mosaic GPU's
copies, barriers or warp specialization:

    NotImplementedError: No state discharge rule implemented for primitive: copy_gmem_to_smem

Fix: `interpret=plgpu.InterpretGPUParams()`, JAX's GPU interpreter, which runs them on a CPU.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((16, 128), jnp.float32)


def double(x_gmem, o_gmem, tile, loaded):
  plgpu.copy_gmem_to_smem(x_gmem, tile, loaded)
  plgpu.barrier_wait(loaded)
  o_gmem[...] = tile[...] * 2.0


# pallas-lsp: trace(f32[16,128])
def run(x):
  return plgpu.kernel(
      double, out_type=X,
      scratch_types=[plgpu.SMEM((16, 128), jnp.float32), plgpu.Barrier(num_arrivals=1)],
      interpret=True,  # wrong: the generic interpreter has no TMA copy
  )(x)


def target():
  return run, (jnp.ones((16, 128), jnp.float32),), "interpret"
