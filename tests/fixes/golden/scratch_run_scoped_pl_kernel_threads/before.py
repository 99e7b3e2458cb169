"""A compiled pl.kernel takes no scratch: the SMEM buffer comes from pl.run_scoped, collective over
the warpgroup axis as JAX requires in a kernel with threads."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  # staging buffer
  tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))  # one per block
  tile[...] = x_ref[...]
  o_ref[...] = tile[...] + 1.0


def target():
  mesh = plgpu.Mesh(grid=(2,), grid_names=("x",), num_threads=2, thread_name="wg")
  kernel = pl.kernel(body, out_type=X, mesh=mesh)
  return kernel, (X,), "cuda"
