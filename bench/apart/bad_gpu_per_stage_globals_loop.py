"""Multi-stage single-block pipeline: one global counter per stage."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGES = 3


def _body(x_ref, o_ref):
  acc = x_ref[...]
  for _ in range(STAGES):
    done = pl.get_global(plgpu.SemaphoreType.REGULAR)
    acc = acc + 1.0
    pl.semaphore_signal(done)
    pl.semaphore_wait(done, 1)
  o_ref[...] = acc


def stages(x):
  return plgpu.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
  return stages, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(stages(jnp.zeros((128,), jnp.float32)))
