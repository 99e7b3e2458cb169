"""Per-row absmax for int8 weight-only quantization (Pallas TPU).

The quantizer's settings come from a JSON-ish table whose entries name the
memory space of the running maximum as a string ("VMEM" for wide rows);
the kernel resolves it with `getattr(pltpu, ...)`.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

QUANT_SETTINGS = {
    "w8a16": {"block_rows": 8, "block_cols": 256, "running_space": "VMEM"},
    "w8a8": {"block_rows": 16, "block_cols": 512, "running_space": "VMEM"},
}


@dataclasses.dataclass(frozen=True)
class QuantSettings:
  block_rows: int
  block_cols: int
  running_space: str

  @classmethod
  def named(cls, scheme: str) -> "QuantSettings":
    return cls(**QUANT_SETTINGS[scheme])

  def running_max(self):
    return getattr(pltpu, self.running_space)((self.block_rows, self.block_cols), jnp.float32)


def _absmax_kernel(w_ref, o_ref, *, settings: QuantSettings):
  j = pl.program_id(1)
  running = pl.get_global(settings.running_max())

  @pl.when(j == 0)
  def _init():
    running[...] = jnp.zeros_like(running)

  running[...] = jnp.maximum(running[...], jnp.abs(w_ref[...].astype(jnp.float32)))

  @pl.when(j == pl.num_programs(1) - 1)
  def _finish():
    row_max = jnp.max(running[...], axis=1, keepdims=True)
    o_ref[...] = jnp.broadcast_to(row_max / 127.0, o_ref.shape)


@functools.partial(jax.jit, static_argnames=("scheme",))
def row_scales(w: jax.Array, scheme: str = "w8a16") -> jax.Array:
  s = QuantSettings.named(scheme)
  rows, cols = w.shape
  scales = pl.pallas_call(
      functools.partial(_absmax_kernel, settings=s),
      out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.float32),
      grid=(rows // s.block_rows, cols // s.block_cols),
      in_specs=[pl.BlockSpec((s.block_rows, s.block_cols), lambda i, j: (i, j))],
      out_specs=pl.BlockSpec((s.block_rows, 128), lambda i, j: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(w)
  return scales[:, 0]


def target():
  return row_scales, (jax.ShapeDtypeStruct((64, 1024), jnp.bfloat16),), "tpu"


if __name__ == "__main__":
  w = jax.random.normal(jax.random.key(0), (64, 1024), jnp.bfloat16)
  print(row_scales(w)[:4])
