"""Multi-stage single-block pipeline: the stage counter lives in a fori_loop body."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGES = 3


def _body(x_ref, o_ref):
  def stage(_, acc):
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)
    pl.semaphore_signal(done)
    pl.semaphore_wait(done, 1)
    return acc + 1.0

  o_ref[...] = jax.lax.fori_loop(0, STAGES, stage, x_ref[...])


def stages(x):
  return plgpu.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
  return stages, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(stages(jnp.zeros((128,), jnp.float32)))
