"""A copy kernel whose warp 0 raises a completion flag fetched at kernel level, before `plgpu.warp_map`."""
# fix-rate: clean

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 128
SIGNALLING_WARP = 0


def copy_with_flag_body(x_ref, y_ref):
  y_ref[...] = x_ref[...] + 1.0
  flag = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @plgpu.warp_map
  def _per_warp(warp_id):

    @pl.when(warp_id == SIGNALLING_WARP)
    def _signal_and_wait():
      pl.semaphore_signal(flag)
      pl.semaphore_wait(flag)


@functools.lru_cache(maxsize=None)
def _kernel(n: int):
  return plgpu.kernel(copy_with_flag_body, out_type=jax.ShapeDtypeStruct((n,), jnp.float32))


def copy_with_flag(x):
  return _kernel(x.shape[0])(x)


def reference(x):
  return np.asarray(x) + 1.0


def target():
  return copy_with_flag, (jax.ShapeDtypeStruct((N,), jnp.float32),), "cuda"


if __name__ == "__main__":
  for n in (N, 2 * N):
    x = jnp.arange(n, dtype=jnp.float32)
    np.testing.assert_array_equal(jax.jit(copy_with_flag)(x), reference(x))
    print("copy ok", n)
