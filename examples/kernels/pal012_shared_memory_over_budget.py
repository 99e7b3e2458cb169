"""PAL012: a Mosaic GPU kernel whose scratch does not fit in a block's shared memory.

256 KiB of scratch and four barriers: more than the 227 KiB (232,448 bytes) a Hopper or
Blackwell block has. JAX refuses the whole kernel when it lowers it; the error names no line:

    ValueError: Mosaic GPU kernel exceeds available shared memory: smem_bytes=262176 > max_smem_bytes=232448

Fix: smaller tiles, or fewer pipeline stages. Hover or the code lens on the launch shows the
estimate (`SMEM 262,176 / 232,448 B`).
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, buf, bars):
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[128])
copy = plgpu.kernel(body, out_type=X,
                    scratch_types=[plgpu.SMEM((65536,), jnp.float32), plgpu.Barrier(num_arrivals=1, num_barriers=4)])


def run(x):
  return copy(x)


def target():
  return run, (X,), "cuda"
