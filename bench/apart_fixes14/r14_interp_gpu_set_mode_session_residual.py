"""Debug session for the Mosaic GPU residual-mix kernel on a laptop (interpreted on CPU).

`DebugSession` flips the process-wide GPU interpreter on for its lifetime, so
notebooks can call the production entry point unchanged.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

WIDTH = 256


@dataclasses.dataclass
class DebugSession:
  detect_races: bool = False
  active: bool = False

  def __enter__(self):
    plgpu.set_gpu_interpret_mode(plgpu.InterpretGPUParams(detect_races=self.detect_races))
    self.active = True
    return self

  def __exit__(self, *exc):
    plgpu.set_gpu_interpret_mode(None)
    self.active = False
    return False


def _residual_mix_body(x_ref, res_ref, o_ref, *, mix: float):
  wide = pl.get_global(plgpu.SMEM((WIDTH,), jnp.float32))
  wide[...] = x_ref[...].astype(jnp.float32) * mix
  wide[...] += res_ref[...].astype(jnp.float32) * (1.0 - mix)
  o_ref[...] = wide[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("mix",))
def residual_mix(x: jax.Array, residual: jax.Array, mix: float = 0.25) -> jax.Array:
  return plgpu.kernel(
      functools.partial(_residual_mix_body, mix=mix),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
  )(x, residual)


_X = np.arange(WIDTH, dtype=np.float32)
_R = np.full((WIDTH,), 4.0, np.float32)


def expected():
  return _X * 0.25 + _R * 0.75


def target():
  def in_session(x, r):
    with DebugSession():
      return residual_mix(x, r)

  return in_session, (jnp.asarray(_X), jnp.asarray(_R)), "interpret"


if __name__ == "__main__":
  with DebugSession(detect_races=True) as session:
    print(session.active, residual_mix(jnp.asarray(_X), jnp.asarray(_R))[:4])
