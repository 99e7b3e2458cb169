"""A get_global of an SMEM buffer made where the kernel is launched and passed into it: asked for in the body
it would be PAL001's (get_global allocates semaphores only), so the move comes with PAL001's fix, the buffer
in scratch_types."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, buf_ref, o_ref):
  buf_ref[...] = x_ref[...] * 2.0
  o_ref[...] = buf_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


@jax.jit
def run(x):
  buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))
  return kernel(x, buf)


def target():
  return run, (X,), "cuda"
