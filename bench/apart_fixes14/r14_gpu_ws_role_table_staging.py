"""Warp-specialized residual RMS gate: each warpgroup owns half of a block (Mosaic GPU).

The kernel runs two warpgroups (`num_threads=2`); a role table maps each
warpgroup index to the function for its half. Both roles widen to f32 first.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

HALF = 128
NUM_WARPGROUPS = 2


def _gate_half(lo: int, x_ref, g_ref, o_ref, *, gain: float):
  widened = pl.get_global(plgpu.SMEM((HALF,), jnp.float32))
  widened[...] = x_ref[pl.ds(lo, HALF)].astype(jnp.float32)
  gate = jax.nn.sigmoid(g_ref[pl.ds(lo, HALF)].astype(jnp.float32) * gain)
  o_ref[pl.ds(lo, HALF)] = (widened[...] * gate).astype(o_ref.dtype)


ROLE_TABLE = {
    0: functools.partial(_gate_half, 0),
    1: functools.partial(_gate_half, HALF),
}


def _gated_body(x_ref, g_ref, o_ref, *, gain: float):
  wg = jax.lax.axis_index("wg")
  for wg_id, role in ROLE_TABLE.items():
    pl.when(wg == wg_id)(functools.partial(role, x_ref, g_ref, o_ref, gain=gain))


@functools.partial(jax.jit, static_argnames=("gain",))
def gated_residual(x: jax.Array, gate: jax.Array, gain: float = 1.0) -> jax.Array:
  return plgpu.kernel(
      functools.partial(_gated_body, gain=gain),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      num_threads=NUM_WARPGROUPS,
      thread_name="wg",
  )(x, gate)


def target():
  args = (jax.ShapeDtypeStruct((NUM_WARPGROUPS * HALF,), jnp.bfloat16),) * 2
  return gated_residual, args, "cuda"


def describe_roles() -> str:
  """Human-readable role table, printed by the kernel benchmark's --verbose flag."""
  return ", ".join(f"wg{wg_id}: rows [{role.args[0]}, {role.args[0] + HALF})" for wg_id, role in ROLE_TABLE.items())


def reference(x: jax.Array, gate: jax.Array, gain: float = 1.0) -> jax.Array:
  g = jax.nn.sigmoid(gate.astype(jnp.float32) * gain)
  return (x.astype(jnp.float32) * g).astype(x.dtype)


if __name__ == "__main__":
  x = jnp.ones((2 * HALF,), jnp.bfloat16)
  print(gated_residual(x, x)[:4])
