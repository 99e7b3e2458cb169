"""Squared-difference kernel written against `pl.kernel` with a `plgpu.Mesh`, the mesh-style entry
point the ragged kernels in this package share (one launcher builds the mesh for all of them).
"""
# fix-rate: kind=run_scoped meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 64


def _mesh(num_blocks: int) -> plgpu.Mesh:
  return plgpu.Mesh(grid=(num_blocks,), grid_names=("blocks",))


def mesh_kernel(body, *, out_type, num_blocks, name=None):
  """The launcher every kernel in the package goes through."""
  return pl.kernel(body, out_type=out_type, mesh=_mesh(num_blocks), name=name)


def _squared_diff_body(a_gmem, b_gmem, out_gmem, *, width):
  rows = pl.ds(jax.lax.axis_index("blocks") * BLOCK_ROWS, BLOCK_ROWS)
  diff = pl.get_global(plgpu.SMEM((BLOCK_ROWS, width), jnp.float32))
  diff[...] = a_gmem[rows, :] - b_gmem[rows, :]
  d = diff[...]
  out_gmem[rows, :] = d * d


def squared_diff(a: jax.Array, b: jax.Array) -> jax.Array:
  rows, width = a.shape
  if rows % BLOCK_ROWS:
    raise ValueError(f"{rows=} must be a multiple of {BLOCK_ROWS}")
  return mesh_kernel(
      functools.partial(_squared_diff_body, width=width),
      out_type=jax.ShapeDtypeStruct(a.shape, jnp.float32),
      num_blocks=rows // BLOCK_ROWS,
      name="squared_diff",
  )(a, b)


def mse(a, b):
  return jnp.mean(squared_diff(a, b))


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return jax.jit(squared_diff), (spec, spec), "cuda"


if __name__ == "__main__":
  ka, kb = jax.random.split(jax.random.key(6))
  a = jax.random.normal(ka, (256, 128), jnp.float32)
  b = jax.random.normal(kb, (256, 128), jnp.float32)
  print(float(jax.jit(mse)(a, b)), float(jnp.mean((a - b) ** 2)))
