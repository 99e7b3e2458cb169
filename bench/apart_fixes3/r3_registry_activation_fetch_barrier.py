"""Elementwise activations as Mosaic GPU kernels, looked up by name.

Kernels register themselves with `@register("name")`; `apply_activation(name, x)` finds the body,
stages one row block in shared memory with a TMA load, applies the activation in place and stores
the block back.
"""
# fix-rate: kind=barrier_scratch meaning=preserving

from typing import Callable

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 64

_ACTIVATIONS: dict[str, Callable] = {}


def register(name: str):
  """Adds the decorated kernel body to the activation registry under `name`."""

  def wrap(body):
    if name in _ACTIVATIONS:
      raise KeyError(f"activation {name!r} registered twice")
    _ACTIVATIONS[name] = body
    return body

  return wrap


def _fetch(x_gmem, tile):
  """TMA-loads this CTA's row block of `x_gmem` into `tile` and waits for it."""
  rows = pl.ds(jax.lax.axis_index("rows") * BLOCK_ROWS, BLOCK_ROWS)
  arrived = pl.get_global(plgpu.Barrier(num_arrivals=1))
  plgpu.copy_gmem_to_smem(x_gmem.at[rows], tile, barrier=arrived)
  plgpu.barrier_wait(arrived)


def _write_back(tile, out_gmem):
  rows = pl.ds(jax.lax.axis_index("rows") * BLOCK_ROWS, BLOCK_ROWS)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, out_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


@register("silu")
def _silu_kernel(x_gmem, out_gmem, tile):
  _fetch(x_gmem, tile)
  x = tile[...]
  tile[...] = x / (1.0 + jnp.exp(-x))
  _write_back(tile, out_gmem)


@register("softplus")
def _softplus_kernel(x_gmem, out_gmem, tile):
  _fetch(x_gmem, tile)
  tile[...] = jnp.log(1.0 + jnp.exp(tile[...]))
  _write_back(tile, out_gmem)


@register("squared_relu")
def _squared_relu_kernel(x_gmem, out_gmem, tile):
  _fetch(x_gmem, tile)
  x = jnp.maximum(tile[...], 0.0)
  tile[...] = x * x
  _write_back(tile, out_gmem)


def apply_activation(name: str, x: jax.Array) -> jax.Array:
  try:
    body = _ACTIVATIONS[name]
  except KeyError:
    raise ValueError(f"unknown activation {name!r}; have {sorted(_ACTIVATIONS)}") from None
  rows, width = x.shape
  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // BLOCK_ROWS,),
      grid_names=("rows",),
      scratch_types=[plgpu.SMEM((BLOCK_ROWS, width), x.dtype)],
  )(x)


def target():
  fn = lambda x: apply_activation("silu", x)
  return fn, (jax.ShapeDtypeStruct((256, 128), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-4.0, 4.0, 256 * 128, dtype=jnp.float32).reshape(256, 128)
  for name in sorted(_ACTIVATIONS):
    print(name, jax.jit(lambda v, n=name: apply_activation(n, v))(x).sum())
