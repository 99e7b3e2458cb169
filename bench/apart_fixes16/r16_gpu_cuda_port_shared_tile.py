"""First Pallas port of our CUDA `bias_tanh` kernel (Mosaic GPU).

The CUDA original, for reference:

    __shared__ float tile[TILE_M][TILE_N];
    tile[ty][tx] = (float)x[row * n + col] + bias[col];
    out[row * n + col] = (half)tanhf(tile[ty][tx]);

The port keeps the names of the CUDA version so the two can be diffed.
"""
# fix-rate: kind=scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M = 64
TILE_N = 128

# Equivalent of the `__shared__ float tile[TILE_M][TILE_N];` declaration.
tile_shared = plgpu.SMEM((TILE_M, TILE_N), jnp.float32)


def bias_tanh_kernel(x_gmem, bias_gmem, out_gmem):
  # blockIdx.x / blockIdx.y
  bx = jax.lax.axis_index("bx")
  by = jax.lax.axis_index("by")
  rows = pl.ds(by * TILE_M, TILE_M)
  cols = pl.ds(bx * TILE_N, TILE_N)

  tile = pl.get_global(tile_shared)
  bias = jnp.broadcast_to(bias_gmem[:, cols], (TILE_M, TILE_N))
  tile[...] = x_gmem[rows, cols].astype(jnp.float32) + bias.astype(jnp.float32)
  # __syncthreads() is implicit: the warpgroup owns the whole tile.
  out_gmem[rows, cols] = jnp.tanh(tile[...]).astype(out_gmem.dtype)


def bias_tanh(x, bias):
  m, n = x.shape
  assert m % TILE_M == 0 and n % TILE_N == 0, (m, n)
  # dim3 grid(n / TILE_N, m / TILE_M);
  launch = plgpu.kernel(
      bias_tanh_kernel,
      out_type=jax.ShapeDtypeStruct((m, n), x.dtype),
      grid=(n // TILE_N, m // TILE_M),
      grid_names=("bx", "by"),
  )
  return launch(x, bias)


def target():
  x = jax.ShapeDtypeStruct((128, 256), jnp.float16)
  bias = jax.ShapeDtypeStruct((1, 256), jnp.float16)
  return jax.jit(bias_tanh), (x, bias), "cuda"


if __name__ == "__main__":
  import numpy as np

  xs = jnp.asarray(np.random.default_rng(0).normal(size=(128, 256)), jnp.float16)
  bs = jnp.zeros((1, 256), jnp.float16)
  print(jax.jit(bias_tanh)(xs, bs).block_until_ready().shape)
