"""Logit soft-capping with a per-column gain for Hopper, written as a builder that returns the launcher.

`build_softcap(hidden, block_rows)` closes over the tile geometry and returns a function
that launches one Mosaic GPU kernel per call; the kernel body is a closure of the builder, so
the tile sizes never travel as arguments.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

_DEFAULT_CAP = 30.0


def _check_geometry(rows: int, hidden: int, block_rows: int) -> None:
  if rows % block_rows:
    raise ValueError(f"rows={rows} is not a multiple of block_rows={block_rows}")
  if hidden % 64:
    raise ValueError(f"hidden={hidden} must be a multiple of 64 for the TMA tile")


def build_softcap(hidden: int, block_rows: int = 64, cap: float = _DEFAULT_CAP, dtype=jnp.float32):
  """Returns `launch(x, gain)` computing `cap * tanh(x * gain / cap)` tile by tile."""

  tile_shape = (block_rows, hidden)

  def _load_tile(x_gmem, row_block, smem, barrier):
    start = row_block * block_rows
    plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(start, block_rows)], smem, barrier)
    plgpu.barrier_wait(barrier)

  def _store_tile(smem, out_gmem, row_block):
    start = row_block * block_rows
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(smem, out_gmem.at[pl.ds(start, block_rows)])
    plgpu.wait_smem_to_gmem(0)

  def kernel(x_gmem, gain_gmem, out_gmem, load_barrier):
    row_block = jax.lax.axis_index("rows")
    staging = pl.get_global(plgpu.SMEM(tile_shape, dtype))
    _load_tile(x_gmem, row_block, staging, load_barrier)
    scaled = staging[...] * gain_gmem[...]
    staging[...] = cap * jnp.tanh(scaled * (1.0 / cap))
    _store_tile(staging, out_gmem, row_block)

  @jax.jit
  def launch(x, gain):
    rows, width = x.shape
    _check_geometry(rows, width, block_rows)
    if width != hidden:
      raise ValueError(f"built for hidden={hidden}, got {width}")
    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, dtype),
        grid=(rows // block_rows,),
        grid_names=("rows",),
        scratch_types=[plgpu.Barrier(num_arrivals=1)],
    )(x, gain.reshape(1, hidden))

  return launch


@functools.lru_cache(maxsize=None)
def softcap_for(hidden: int):
  """One launcher per hidden size, as the model code asks for it layer by layer."""
  block_rows = 128 if hidden <= 256 else 64
  return build_softcap(hidden, block_rows)


def reference(x, gain):
  return _DEFAULT_CAP * jnp.tanh(x * gain / _DEFAULT_CAP)


def target():
  launch = softcap_for(256)
  args = (jax.ShapeDtypeStruct((512, 256), jnp.float32), jax.ShapeDtypeStruct((256,), jnp.float32))
  return launch, args, "cuda"


if __name__ == "__main__":
  x = jax.random.normal(jax.random.key(0), (512, 256), jnp.float32)
  gain = jnp.linspace(0.5, 1.5, 256, dtype=jnp.float32)
  out = softcap_for(256)(x, gain)
  print("max abs err", float(jnp.max(jnp.abs(out - reference(x, gain)))))
