"""Gated residual for the all-gather overlap path, checked under the TPU interpreter.

``out = x * gate + residual``. On hardware this kernel runs inside a collective (the gathered
shards of ``x`` arrive from peers), so every step first meets its peers on the chip barrier
semaphore. The test harness at the bottom runs it under ``pltpu.InterpretParams`` on the CPU,
where the barrier is simulated.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=collective_id meaning=preserving

BLOCK_ROWS = 8


class OverlapSettings:
  """Launch settings the collective matmul and its epilogues share."""

  dimension_semantics = ("arbitrary",)
  vmem_limit_bytes = 32 * 1024 * 1024

  @classmethod
  def compiler_params(cls) -> pltpu.CompilerParams:
    return pltpu.CompilerParams(
        dimension_semantics=cls.dimension_semantics,
        vmem_limit_bytes=cls.vmem_limit_bytes,
    )


def _gated_residual_body(x_ref, g_ref, r_ref, o_ref):
  barrier = pltpu.get_barrier_semaphore()
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  o_ref[...] = x_ref[...] * g_ref[...] + r_ref[...]


def gated_residual(x, gate, residual, *, interpret=False):
  rows, cols = x.shape
  spec = pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))
  return pl.pallas_call(
      _gated_residual_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[spec, spec, spec],
      out_specs=spec,
      compiler_params=OverlapSettings.compiler_params(),
      interpret=interpret,
  )(x, gate, residual)


def _inputs():
  x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128)
  gate = jnp.full_like(x, 2.0)
  residual = jnp.ones_like(x)
  return x, gate, residual


def target():
  fn = functools.partial(gated_residual, interpret=pltpu.InterpretParams())
  return fn, _inputs(), "interpret"


def expected():
  x, gate, residual = _inputs()
  return x * gate + residual


def gated_residual_reference(x, gate, residual):
  return x * gate + residual


if __name__ == "__main__":
  fn, args, _ = target()
  print("ok" if jnp.array_equal(fn(*args), expected()) else "MISMATCH")
