"""PAL019: a global-memory array (`plgpu.GMEM`) in a Mosaic GPU kernel's scratch.

A kernel allocates on-chip buffers only; its global memory is its operands and outputs (jax 0.12):

    NotImplementedError: Unsupported memory space: gmem

Fix: make the workspace one more output (`out_type=(X, jax.ShapeDtypeStruct(...))`), which the launcher drops.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128, 128), jnp.float32)


def staged(x_ref, o_ref, ws_ref):
  ws_ref[...] = x_ref[...] + 1.0
  o_ref[...] = ws_ref[...] * ws_ref[...]


# pallas-lsp: trace(f32[128,128])
def square_plus_one(x):
  return plgpu.kernel(staged, out_type=X, scratch_types=[plgpu.GMEM((128, 128), jnp.float32)])(x)  # wrong: GMEM


def target():
  return square_plus_one, (X,), "cuda"
