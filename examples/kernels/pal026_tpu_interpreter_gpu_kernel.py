"""PAL026: a Mosaic GPU kernel given the TPU interpreter's parameters by a helper the TPU test suite shares.

The TPU interpreter knows only TPU memory spaces, and a Mosaic GPU kernel's operands are in GMEM:

    KeyError: <MemorySpace.GMEM: 'gmem'>

Fix: `plgpu.InterpretGPUParams(detect_races=True)`, JAX's GPU interpreter, with the same options.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((256,), jnp.float32)


def suite_interpreter():
  return pltpu.InterpretParams(detect_races=True)  # wrong: the TPU interpreter's


def double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0


# pallas-lsp: trace(f32[256])
def run(x):
  return plgpu.kernel(double, out_type=X, interpret=suite_interpreter())(x)


def target():
  return run, (jnp.ones((256,), jnp.float32),), "interpret"
