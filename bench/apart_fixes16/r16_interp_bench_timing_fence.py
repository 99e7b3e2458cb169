"""Benchmark script for the fused scale-and-shift kernel.

Runs every entry of `SWEEP`, timing the kernel; where no TPU is attached the
kernel runs in interpret mode so the script doubles as a smoke test.
"""
# fix-rate: kind=scratch meaning=preserving
import functools
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SWEEP = [
    {"rows": 1024, "cols": 512, "block_rows": 128},
    {"rows": 4096, "cols": 1024, "block_rows": 256},
]


def _on_tpu() -> bool:
  return any(d.platform == "tpu" for d in jax.devices())


def _scale_shift_kernel(x_ref, o_ref):
  fence = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 3.0
  pl.semaphore_signal(fence)
  pl.semaphore_wait(fence)
  o_ref[...] = o_ref[...] - 1.0


@functools.partial(jax.jit, static_argnames=("block_rows", "interpret"))
def scale_shift(x, block_rows=128, interpret=False):
  m, n = x.shape
  spec = pl.BlockSpec((block_rows, n), lambda i: (i, 0))
  return pl.pallas_call(
      _scale_shift_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // block_rows,),
      in_specs=[spec],
      out_specs=spec,
      interpret=interpret,
  )(x)


class Timer:
  def __init__(self, iters=10):
    self.iters = iters

  def __call__(self, fn, *args):
    jax.block_until_ready(fn(*args))
    t0 = time.perf_counter()
    for _ in range(self.iters):
      out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / self.iters


def run_sweep(timer=Timer()):
  interpret = not _on_tpu()
  for entry in SWEEP:
    x = jnp.ones((entry["rows"], entry["cols"]), jnp.float32)
    fn = functools.partial(scale_shift, block_rows=entry["block_rows"], interpret=interpret)
    print(entry, f"{timer(fn, x) * 1e6:.1f} us")


_X = (np.arange(16 * 128, dtype=np.float32).reshape(16, 128) % 9) - 4.0


def target():
  fn = functools.partial(scale_shift, block_rows=8, interpret=not _on_tpu())
  return fn, (jnp.asarray(_X),), "interpret"


def expected():
  return _X * 3.0 - 1.0


if __name__ == "__main__":
  run_sweep()
