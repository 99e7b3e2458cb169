"""Fused "sum the inputs, then centre" kernel with a phase fence, runnable without an accelerator.

`fused_center(*xs)` takes any number of same-shaped operands.  Phase one writes their sum to the
output block; a semaphore signal/wait pair fences it from phase two, which reads the block back and
subtracts its mean (on the TPU build, phase two is issued by the other core of the megacore pair, so
the fence is kept in the single-core kernel too).  The launcher interprets the kernel on a CPU-only
host, where the integration tests run.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving


def _on_accelerator() -> bool:
  return jax.default_backend() in ("tpu", "gpu")


def _center_kernel(*refs, num_inputs: int):
  ins, out_ref = refs[:num_inputs], refs[num_inputs]
  phase_done = pl.get_global(pltpu.SemaphoreType.REGULAR)

  total = ins[0][...]
  for ref in ins[1:]:
    total = total + ref[...]
  out_ref[...] = total
  pl.semaphore_signal(phase_done, 1)

  pl.semaphore_wait(phase_done, 1)
  block = out_ref[...]
  out_ref[...] = block - jnp.mean(block)


def fused_center(*xs: jax.Array) -> jax.Array:
  if not xs:
    raise TypeError("fused_center needs at least one operand")
  shape, dtype = xs[0].shape, xs[0].dtype
  return pl.pallas_call(
      functools.partial(_center_kernel, num_inputs=len(xs)),
      out_shape=jax.ShapeDtypeStruct(shape, dtype),
      interpret=not _on_accelerator(),
  )(*xs)


def _inputs():
  base = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128) % 4
  return base, 2 * base, jnp.ones_like(base)


def expected():
  total = sum(np.asarray(a) for a in _inputs())
  return total - total.mean()


def target():
  return fused_center, _inputs(), "interpret"


if __name__ == "__main__":
  print(np.abs(np.asarray(fused_center(*_inputs())) - expected()).max())
