"""Cached kernel factory for a staged reduction; stage buffers in shared memory."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@functools.lru_cache(maxsize=None)
def make_reduce(n: int, stages: int):
  def body(x_ref, o_ref, stage_bufs, bar):
    o_ref[...] = x_ref[...]

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((n,), jnp.float32),
      scratch_types=(
          plgpu.SMEM((stages, n), jnp.float32),
          plgpu.Barrier(num_arrivals=1, num_barriers=stages),
      ),
  )


def reduce(x, stages=3):
  return make_reduce(x.shape[0], stages)(x)


def target():
  return reduce, (jax.ShapeDtypeStruct((16384,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(reduce(jnp.ones((16384,), jnp.float32)))
