"""Quantised row scaling for Mosaic GPU with per-format accumulation rules.

`accum_type` is a `functools.singledispatch` over the quantisation format objects, so a
new format registers how it accumulates without touching the kernel.
"""

# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Int8Format:
  scale: float = 1.0 / 127


@dataclasses.dataclass(frozen=True)
class Fp8Format:
  scale: float = 1.0 / 448


@functools.singledispatch
def accum_type(fmt, block: int):
  raise NotImplementedError(type(fmt).__name__)


@accum_type.register
def _(fmt: Int8Format, block: int):
  return plgpu.SMEM((block,), jnp.float32)


@accum_type.register
def _(fmt: Fp8Format, block: int):
  return plgpu.SMEM((block,), jnp.float32)


class DequantScale:
  """Dequantise `q` and multiply by a per-element `gain`."""

  block = 128

  def __init__(self, fmt):
    self.fmt = fmt

  def _body(self, q_ref, gain_ref, o_ref):
    acc = pl.get_global(accum_type(self.fmt, self.block))
    i = lax.axis_index("blocks")
    sl = pl.ds(i * self.block, self.block)
    acc[...] = q_ref[sl].astype(jnp.float32) * self.fmt.scale
    acc[...] = acc[...] * gain_ref[sl].astype(jnp.float32)
    o_ref[sl] = acc[...].astype(o_ref.dtype)

  def __call__(self, q, gain):
    (n,) = q.shape
    return plgpu.kernel(
        self._body,
        out_type=jax.ShapeDtypeStruct((n,), jnp.bfloat16),
        grid=(n // self.block,),
        grid_names=("blocks",),
    )(q, gain)


_INT8 = DequantScale(Int8Format())


@jax.jit
def dequant_int8(q, gain):
  return _INT8(q, gain)


def target():
  args = (jax.ShapeDtypeStruct((2048,), jnp.int8), jax.ShapeDtypeStruct((2048,), jnp.bfloat16))
  return dequant_int8, args, "cuda"


if __name__ == "__main__":
  print(dequant_int8(jnp.ones((2048,), jnp.int8), jnp.ones((2048,), jnp.bfloat16))[:4])
