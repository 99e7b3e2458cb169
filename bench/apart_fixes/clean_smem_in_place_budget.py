"""An elementwise kernel that scales a large tile in place in shared memory (fits the budget)."""
# fix-rate: clean

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

TUNING = {"large": 120, "small": 32}
COLS = 256


def make_scale(size_name: str = "large"):
  rows = TUNING[size_name]
  vec = jax.ShapeDtypeStruct((rows, COLS), jnp.float32)

  def scale(x_gmem, o_gmem, tile, landed):
    plgpu.copy_gmem_to_smem(x_gmem, tile, landed)
    plgpu.barrier_wait(landed)
    tile[...] = tile[...] * 1.5
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tile, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  scratch = [plgpu.SMEM((rows, COLS), jnp.float32), plgpu.Barrier(num_arrivals=1)]
  return plgpu.kernel(scale, out_type=vec, scratch_types=scratch), vec


def run(x):
  fn, _ = make_scale()
  return fn(x)


def target():
  _, vec = make_scale()
  return run, (vec,), "cuda"
