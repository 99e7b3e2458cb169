"""One kernel body, two kernels that run it: a trace inside the body asks which one."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def double(x_ref, o_ref):
  o_ref[...] = x_ref[...] * 2.0


# pallas-lsp: trace(f32[128])
small = plgpu.kernel(double, out_type=X)
# pallas-lsp: trace(f32[128])
blocks = plgpu.kernel(double, out_type=X, grid=(1,), grid_names=("block",))
