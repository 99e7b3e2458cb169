"""Load a tile into shared memory with a TMA copy; buffer kinds live in a module-level registry."""
# fix-rate: kind=barrier_scratch meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE = 128

BUFFER_KINDS = {
    "tile": plgpu.SMEM((TILE,), jnp.float32),
    "arrival": plgpu.Barrier(num_arrivals=1),
}


def tile_copy(src_ref, dst_ref, tile_ref):
  landed = pl.get_global(BUFFER_KINDS["arrival"])
  plgpu.copy_gmem_to_smem(src_ref, tile_ref, landed)
  plgpu.barrier_wait(landed)
  dst_ref[...] = tile_ref[...] + 1.0


def target():
  spec = jax.ShapeDtypeStruct((TILE,), jnp.float32)
  fn = plgpu.kernel(tile_copy, out_type=spec, scratch_types=[BUFFER_KINDS["tile"]])
  return fn, (spec,), "cuda"
