"""Producer/consumer counters over a grid of blocks (Mosaic GPU)."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

NUM_STAGES = 4


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((512,), jnp.float32),
    grid=(NUM_STAGES,),
    grid_names=("stage",),
)
def pipeline_kernel(x_ref, o_ref):
  stage = jax.lax.axis_index("stage")
  stage_done = pl.get_global(plgpu.SemaphoreType.REGULAR((NUM_STAGES,)))
  o_ref[...] = x_ref[...] * 3.0
  pl.semaphore_signal(stage_done.at[stage])
  pl.semaphore_wait(stage_done.at[stage], 1)


def target():
  return pipeline_kernel, (jax.ShapeDtypeStruct((512,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(pipeline_kernel(jnp.ones((512,), jnp.float32)))
