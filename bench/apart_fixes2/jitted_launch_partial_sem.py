"""A jitted launcher that makes the kernel's semaphore on the host and binds it with functools.partial.

`launch_scaled` is the public entry point; it is `jax.jit`-ed with the scale static. The global
semaphore that orders the two halves of the body was requested in the launcher, outside the kernel.
"""
# fix-rate: kind=into_body meaning=preserving

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 256


def _scaled_copy_body(sem, scale, x_ref, y_ref):
  y_ref[...] = x_ref[...] * scale
  pl.semaphore_signal(sem)
  pl.semaphore_wait(sem)
  y_ref[...] = y_ref[...] + 1.0


@functools.partial(jax.jit, static_argnames=("scale",))
def launch_scaled(x, scale: float = 2.0):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR)
  body = functools.partial(_scaled_copy_body, sem, scale)
  out = jax.ShapeDtypeStruct(x.shape, x.dtype)
  return plgpu.kernel(body, out_type=out)(x)


def reference(x, scale: float):
  return np.asarray(x) * scale + 1.0


def benchmark(n: int = N, scale: float = 2.0, iters: int = 10) -> float:
  """Mean seconds per call of the jitted launcher, after one warm-up call."""
  x = jnp.ones((n,), jnp.float32)
  jax.block_until_ready(launch_scaled(x, scale=scale))
  start = time.perf_counter()
  for _ in range(iters):
    jax.block_until_ready(launch_scaled(x, scale=scale))
  return (time.perf_counter() - start) / iters


def target():
  return functools.partial(launch_scaled, scale=3.0), (jax.ShapeDtypeStruct((N,), jnp.float32),), "cuda"


if __name__ == "__main__":
  x = jnp.ones((N,), jnp.float32)
  for s in (1.0, 3.0):
    np.testing.assert_allclose(launch_scaled(x, scale=s), reference(x, s))
  print("scaled ok", f"{benchmark() * 1e6:.1f} us/call")
