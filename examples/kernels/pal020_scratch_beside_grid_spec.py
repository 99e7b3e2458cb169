"""PAL020: a TPU kernel scaling the blocks a prefetched table picks, its staging buffer given to
pl.pallas_call beside the PrefetchScalarGridSpec that carries its grid and block specs.

A launch given a grid spec takes its scratch there only; pl.pallas_call refuses it beside one:

    ValueError: If `grid_spec` is specified, then `scratch_shapes` must be `()`.

Fix: `scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)]` inside the PrefetchScalarGridSpec.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def scale_blocks(ids_ref, scales_ref, x_ref, o_ref, work_ref):
  work_ref[...] = x_ref[...].astype(jnp.float32)
  o_ref[...] = work_ref[...] * scales_ref[pl.program_id(0)]


# pallas-lsp: trace(i32[4], f32[4], bf16[64,128])
def run(ids, scales, x):
  spec = pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=2, grid=(4,),
      in_specs=[pl.BlockSpec((8, 128), lambda i, ids, scales: (ids[i], 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i, ids, scales: (i, 0)))
  return pl.pallas_call(
      scale_blocks, out_shape=jax.ShapeDtypeStruct((32, 128), jnp.float32), grid_spec=spec,
      scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)],  # wrong: it belongs in the grid spec
  )(ids, scales, x)


def target():
  args = (jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((4,), jnp.float32),
          jax.ShapeDtypeStruct((64, 128), jnp.bfloat16))
  return run, args, "tpu"
