"""SwiGLU gate ``silu(gate) * up`` for the TPU MLP (Pallas TPU).

The TPU port of the GPU activation kernels: the gate block is upcast into an f32
staging buffer (the same helper the GPU kernels use, so that both backends round
identically), the activation is applied there and multiplied by the up
projection. Blocks are ``(block_rows, hidden)`` and come from ``BLOCK_ROWS``.
"""

# fix-rate: kind=memory_space meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r8_staging import staging, staging_bytes

BLOCK_ROWS = {128: 64, 256: 32, 512: 16}
VMEM_BUDGET = 16 * 1024 * 1024


def _swiglu_kernel(gate_ref, up_ref, o_ref, gate_f32):
  gate_f32[...] = gate_ref[...].astype(jnp.float32)
  g = gate_f32[...]
  act = g * jax.nn.sigmoid(g)
  o_ref[...] = (act * up_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


@jax.jit
def swiglu(gate: jax.Array, up: jax.Array) -> jax.Array:
  rows, hidden = gate.shape
  block_rows = BLOCK_ROWS.get(hidden, 8)
  block = (block_rows, hidden)
  if staging_bytes(block) > VMEM_BUDGET:
    raise ValueError(f"staging tile {block} does not fit")
  spec = pl.BlockSpec(block, lambda i: (i, 0))
  return pl.pallas_call(
      _swiglu_kernel,
      out_shape=jax.ShapeDtypeStruct(gate.shape, gate.dtype),
      grid=(rows // block_rows,),
      in_specs=[spec, spec],
      out_specs=spec,
      scratch_shapes=[staging(block)],
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
  )(gate, up)


def target():
  x = jax.ShapeDtypeStruct((256, 256), jnp.float32)
  return swiglu, (x, x), "tpu"


if __name__ == "__main__":
  g = jnp.linspace(-4, 4, 256 * 256, dtype=jnp.float32).reshape(256, 256)
  print(jnp.max(jnp.abs(swiglu(g, g) - jax.nn.silu(g) * g)))
