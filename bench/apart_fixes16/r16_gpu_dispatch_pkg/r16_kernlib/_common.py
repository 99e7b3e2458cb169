"""TMA helpers shared by the Mosaic GPU launchers."""
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK_ROWS = 64


def load_tile(src_gmem, dst_smem, barrier):
  plgpu.copy_gmem_to_smem(src_gmem, dst_smem, barrier)
  plgpu.barrier_wait(barrier)
  return dst_smem
