"""TPU VMEM asked for with get_global in a Mosaic GPU kernel: the GPU has SMEM instead (unsafe: another memory)."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, buf_ref):
  buf_ref[...] = x_ref[...]
  o_ref[...] = buf_ref[...] + 1.0


def target():
  return plgpu.kernel(
    body,
    out_type=X,
    grid=(2,),
    grid_names=("x",),
    scratch_types=[plgpu.SMEM((128,), jnp.float32)],
  ), (X,), "cuda"
