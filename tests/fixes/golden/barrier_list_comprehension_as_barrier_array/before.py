"""Per-stage TMA barriers asked of get_global one by one in a list comprehension over `range(STAGES)`: one scratch
barrier array `plgpu.Barrier(num_arrivals=1, num_barriers=STAGES)`, each `bars[s]` becoming `bars.at[s]`."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGES = 2
X = jax.ShapeDtypeStruct((STAGES, 64, 128), jnp.float32)


def body(x_gmem, o_gmem):
  bars = [pl.get_global(plgpu.Barrier(num_arrivals=1)) for _ in range(STAGES)]

  def staged(tiles):
    for s in range(STAGES):
      plgpu.copy_gmem_to_smem(x_gmem.at[s], tiles.at[s], bars[s])
    for s in range(STAGES):
      plgpu.barrier_wait(bars[s])
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(tiles, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(staged, plgpu.SMEM((STAGES, 64, 128), jnp.float32))


def target():
  return plgpu.kernel(body, out_type=X), (X,), "cuda"
