"""Kernels that share a `Signals` namespace class; its DONE semaphore is made when the module is imported.

The class attribute calls `pl.get_global` at import time, outside any kernel, so importing the module
already fails; the kernel author meant one DONE semaphore per launch.
"""
# fix-rate: kind=into_body meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 128


class Signals:
  """Semaphores the kernels of this module signal and wait on."""

  DONE = pl.get_global(plgpu.SemaphoreType.REGULAR)


def axpy_body(a_ref, x_ref, y_ref, out_ref):
  out_ref[...] = a_ref[...] * x_ref[...] + y_ref[...]
  pl.semaphore_signal(Signals.DONE)
  pl.semaphore_wait(Signals.DONE)


def axpy(a, x, y):
  return plgpu.kernel(axpy_body, out_type=jax.ShapeDtypeStruct((N,), jnp.float32))(a, x, y)


def scale_body(x_ref, out_ref):
  out_ref[...] = x_ref[...] * 0.5
  pl.semaphore_signal(Signals.DONE)
  pl.semaphore_wait(Signals.DONE)


def scale(x):
  return plgpu.kernel(scale_body, out_type=jax.ShapeDtypeStruct((N,), jnp.float32))(x)


def axpy_then_scale(a, x, y):
  """The module's public entry point: both kernels, one after the other."""
  return scale(axpy(a, x, y))


def reference(a, x, y):
  return (np.asarray(a) * np.asarray(x) + np.asarray(y)) * 0.5


def target():
  v = jax.ShapeDtypeStruct((N,), jnp.float32)
  return axpy_then_scale, (v, v, v), "cuda"


if __name__ == "__main__":
  a = jnp.full((N,), 2.0, jnp.float32)
  x = jnp.arange(N, dtype=jnp.float32)
  y = jnp.ones((N,), jnp.float32)
  np.testing.assert_allclose(jax.jit(axpy)(a, x, y), 2.0 * np.arange(N) + 1.0)
  np.testing.assert_allclose(jax.jit(axpy_then_scale)(a, x, y), reference(a, x, y))
  print("axpy ok")
