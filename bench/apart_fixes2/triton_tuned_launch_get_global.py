"""A GPU kernel launched with `pl.pallas_call` and Triton tuning parameters, whose body pulses a global semaphore.

The tuning table picks `num_warps` per device; the body was written for Mosaic GPU (a global
semaphore orders the two writes), which Triton cannot lower.
"""
# fix-rate: kind=mosaic_gpu_kernel meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton

N = 256

NUM_WARPS = {
    "NVIDIA H100 80GB HBM3": 4,
    "NVIDIA H200": 8,
}


def relu_then_shift_body(x_ref, o_ref):
  ordered = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = jnp.maximum(x_ref[...], 0.0)
  pl.semaphore_signal(ordered)
  pl.semaphore_wait(ordered)
  o_ref[...] = o_ref[...] + 1.0


@functools.lru_cache(maxsize=None)
def relu_then_shift(device_kind: str = "NVIDIA H200"):
  params = pltriton.CompilerParams(num_warps=NUM_WARPS.get(device_kind, 4), num_stages=1)
  return pl.pallas_call(
      relu_then_shift_body,
      out_shape=jax.ShapeDtypeStruct((N,), jnp.float32),
      compiler_params=params,
  )


def reference(x):
  return np.maximum(np.asarray(x), 0.0) + 1.0


def sweep():
  """Run the kernel with every tuning entry (on a GPU) and check each against the reference."""
  x = jnp.linspace(-1.0, 1.0, N, dtype=jnp.float32)
  for kind in NUM_WARPS:
    np.testing.assert_allclose(jax.jit(relu_then_shift(kind))(x), reference(x))
    print(kind, "ok")


def target():
  return relu_then_shift(), (jax.ShapeDtypeStruct((N,), jnp.float32),), "triton"


if __name__ == "__main__":
  fn = relu_then_shift(jax.devices()[0].device_kind)
  x = jnp.linspace(-1.0, 1.0, N, dtype=jnp.float32)
  np.testing.assert_allclose(jax.jit(fn)(x), reference(x))
  print("relu shift ok")
  sweep()
