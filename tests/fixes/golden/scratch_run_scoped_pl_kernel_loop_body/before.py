"""A compiled pl.kernel's SMEM buffer asked for in a Python loop, once per step the trace unrolls: pl.run_scoped
allocates it for the rest of the loop body, once per step, as each get_global asked."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 128), jnp.float32)


def body(x_ref, o_ref):
  for step in range(2):
    tile = pl.get_global(plgpu.SMEM((128,), jnp.float32))  # one per step
    tile[...] = x_ref[step]
    o_ref[step] = tile[...] + 1.0
    _ = step
  o_ref[0] = o_ref[0] * 2.0


def target():
  kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
  return kernel, (X,), "cuda"
