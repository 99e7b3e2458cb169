"""A Mosaic GPU epilogue that stages its tile in SMEM and stores it with TMA, interpreted with interpret=True (the
generic interpreter has no discharge rule for copy_smem_to_gmem): JAX's GPU interpreter runs it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 8


def _epilogue(acc_gmem, bias_gmem, out_gmem, staged):
  staged[...] = jnp.maximum(acc_gmem[...] + bias_gmem[...], 0.0)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(staged, out_gmem)
  plgpu.wait_smem_to_gmem(0)


epilogue = plgpu.kernel(
    _epilogue,
    out_type=jax.ShapeDtypeStruct((ROWS, 128), jnp.float32),
    scratch_types=[plgpu.SMEM((ROWS, 128), jnp.float32)],
    interpret=plgpu.InterpretGPUParams(),
)


def _inputs():
  acc = np.linspace(-4.0, 4.0, ROWS * 128, dtype=np.float32).reshape(ROWS, 128)
  return acc, np.full((ROWS, 128), 0.5, np.float32)


def target():
  return epilogue, tuple(jnp.asarray(a) for a in _inputs()), "interpret"


def expected():
  acc, bias = _inputs()
  return np.maximum(acc + bias, 0.0)
