"""Global absmax of a tensor for logging overflow statistics (Pallas TPU, interpreted on CPU).

Kernel settings live in a TOML document (shipped next to the model config);
the `interpret` key is on for the CPU smoke-test profile.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools
import tomllib

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SETTINGS_TOML = """
[profiles.cpu-smoke.absmax]
block_rows = 8
interpret = true

[profiles.v5e.absmax]
block_rows = 16
interpret = false
"""


@dataclasses.dataclass(frozen=True)
class AbsmaxSettings:
  block_rows: int
  interpret: bool

  @classmethod
  def from_toml(cls, text: str, profile: str) -> "AbsmaxSettings":
    return cls(**tomllib.loads(text)["profiles"][profile]["absmax"])


def _absmax_kernel(x_ref, o_ref):
  i = pl.program_id(0)
  best = pl.get_global(pltpu.SMEM((1,), jnp.float32))

  @pl.when(i == 0)
  def _():
    best[0] = 0.0

  best[0] = jnp.maximum(best[0], jnp.max(jnp.abs(x_ref[...])))
  o_ref[...] = jnp.full(o_ref.shape, best[0], jnp.float32)


@functools.partial(jax.jit, static_argnames=("settings",))
def global_absmax(x: jax.Array, settings: AbsmaxSettings) -> jax.Array:
  rows, cols = x.shape
  out = pl.pallas_call(
      _absmax_kernel,
      out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
      grid=(rows // settings.block_rows,),
      in_specs=[pl.BlockSpec((settings.block_rows, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
      interpret=settings.interpret,
  )(x)
  return out[0, 0]


_X = np.linspace(-7.5, 3.0, 32 * 128, dtype=np.float32).reshape(32, 128)


def expected():
  return np.float32(np.abs(_X).max())


def target():
  settings = AbsmaxSettings.from_toml(SETTINGS_TOML, "cpu-smoke")
  return functools.partial(global_absmax, settings=settings), (jnp.asarray(_X),), "interpret"


if __name__ == "__main__":
  print(target()[0](jnp.asarray(_X)), expected())
