"""Swish with a learnable beta for Mosaic GPU, plus a small timing harness.

On machines without a GPU (`_has_gpu()` probes `jax.devices("gpu")`) the kernel runs
under the Mosaic GPU interpreter, so the harness and the unit check run everywhere.
"""

# fix-rate: kind=scratch meaning=preserving

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@functools.cache
def _has_gpu() -> bool:
  try:
    return bool(jax.devices("gpu"))
  except RuntimeError:
    return False


def _interpret_params():
  return None if _has_gpu() else plgpu.InterpretGPUParams()


def _swish_body(beta, x_ref, o_ref):
  stage = pl.get_global(plgpu.SMEM(x_ref.shape, jnp.float32))
  stage[...] = x_ref[...].astype(jnp.float32)
  v = stage[...]
  o_ref[...] = (v * jax.nn.sigmoid(beta * v)).astype(o_ref.dtype)


def swish(x, beta: float = 1.0):
  return plgpu.kernel(
      functools.partial(_swish_body, beta),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=_interpret_params(),
  )(x)


def bench(n: int = 256, iters: int = 5) -> float:
  fn = jax.jit(swish)
  x = jnp.ones((n,), jnp.float32)
  jax.block_until_ready(fn(x))
  start = time.perf_counter()
  for _ in range(iters):
    jax.block_until_ready(fn(x))
  return (time.perf_counter() - start) / iters


def _example():
  return ((jnp.arange(256, dtype=jnp.float32) % 5) - 2.0,)


def target():
  return swish, _example(), "interpret"


def expected():
  (x,) = _example()
  return np.asarray(x * jax.nn.sigmoid(1.0 * x))


if __name__ == "__main__":
  print(f"swish: {bench() * 1e3:.3f} ms/iter (interpret={not _has_gpu()})")
