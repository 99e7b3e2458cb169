"""Bias-add epilogue that synchronises with its peers before it writes (TPU).

In the tensor-parallel MLP this epilogue runs after a collective matmul; before a core
overwrites its output slice it must know that every peer has finished reading the previous
contents, so it signals and waits on the chip's barrier semaphore. The compiler parameters are
produced per generation by ``compiler_params_for``.
"""

from __future__ import annotations

import functools
from typing import Literal

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=collective_id meaning=preserving

Chip = Literal["v5e", "v5p", "v6e"]

VMEM_LIMITS: dict[Chip, int] = {
    "v5e": 64 * 1024 * 1024,
    "v5p": 96 * 1024 * 1024,
    "v6e": 96 * 1024 * 1024,
}

BLOCK = (128, 128)


def compiler_params_for(chip: Chip) -> pltpu.CompilerParams:
  return pltpu.CompilerParams(
      dimension_semantics=("arbitrary",),
      vmem_limit_bytes=VMEM_LIMITS[chip],
  )


def _synced_bias_body(x_ref, b_ref, o_ref):
  barrier = pltpu.get_barrier_semaphore()
  # One arrival per core: ours. Peers arrive on their own copy of the barrier.
  pl.semaphore_signal(barrier)
  pl.semaphore_wait(barrier)
  o_ref[...] = x_ref[...] + b_ref[...]


@functools.partial(jax.jit, static_argnames=("chip",))
def synced_bias_add(x: jax.Array, bias: jax.Array, chip: Chip = "v5e") -> jax.Array:
  rows, cols = x.shape
  spec = pl.BlockSpec(BLOCK, lambda i: (i, 0))
  return pl.pallas_call(
      _synced_bias_body,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // BLOCK[0],),
      in_specs=[spec, spec],
      out_specs=spec,
      compiler_params=compiler_params_for(chip),
  )(x, bias)


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return synced_bias_add, (spec, spec), "tpu"


def detect_chip() -> Chip:
  """Maps the first device's kind to a key of ``VMEM_LIMITS`` (v5e when unknown)."""
  kind = jax.devices()[0].device_kind.lower()
  if "v6" in kind:
    return "v6e"
  if "v5p" in kind or "v5 p" in kind:
    return "v5p"
  return "v5e"


def mlp_epilogue(h: jax.Array, bias: jax.Array) -> jax.Array:
  """Adds the broadcast bias to the collective matmul's output slice on this core."""
  b = jnp.broadcast_to(bias, h.shape)
  return synced_bias_add(h, b, chip=detect_chip())


if __name__ == "__main__":
  h = jnp.ones((256, 128), jnp.float32)
  bias = jnp.arange(128, dtype=jnp.float32)
  got = mlp_epilogue(h, bias)
  print(float(jnp.max(jnp.abs(got - (h + bias)))))
