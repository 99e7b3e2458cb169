"""A TPU VMEM buffer from get_global in a compiled pl.kernel, which takes no scratch: SMEM from run_scoped (unsafe)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def scoped(tile):
    tile[...] = x_ref[...] + 1.0
    o_ref[...] = tile[...]
  pl.run_scoped(scoped, plgpu.SMEM((128,), jnp.float32), collective_axes="wg")


kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg"))


def target():
  return kernel, (X,), "cuda"
