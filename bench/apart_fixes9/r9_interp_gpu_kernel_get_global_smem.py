"""Quantise-dequantise round trip (fake quantisation) for QAT, Mosaic GPU kernel run interpreted.

``fake_quant(x) = clip(round(x / scale), -qmax, qmax) * scale`` with a per-tensor scale. The
kernel is written for Mosaic GPU; the unit test below runs it with ``interpret=True`` so the
CPU-only CI covers it. The integer codes are staged in an f32 shared-memory tile.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=scratch meaning=preserving


@dataclasses.dataclass(frozen=True)
class QuantSpec:
  bits: int = 8
  scale: float = 0.5

  @property
  def qmax(self) -> float:
    return float(2 ** (self.bits - 1) - 1)


def _fake_quant_body(x_ref, o_ref, *, spec: QuantSpec):
  codes = pl.get_global(plgpu.SMEM(x_ref.shape, jnp.float32))
  codes[...] = jnp.clip(jnp.round(x_ref[...] / spec.scale), -spec.qmax, spec.qmax)
  o_ref[...] = codes[...] * spec.scale


def fake_quant(x: jax.Array, spec: QuantSpec = QuantSpec(), *, interpret: bool = False) -> jax.Array:
  return plgpu.kernel(
      functools.partial(_fake_quant_body, spec=spec),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


def _x():
  return (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) - 4096.0) / 16.0


def target():
  return functools.partial(fake_quant, spec=QuantSpec(bits=4), interpret=True), (_x(),), "interpret"


def expected():
  spec = QuantSpec(bits=4)
  return jnp.clip(jnp.round(_x() / spec.scale), -spec.qmax, spec.qmax) * spec.scale


def fake_quant_reference(x: jax.Array, spec: QuantSpec) -> jax.Array:
  return jnp.clip(jnp.round(x / spec.scale), -spec.qmax, spec.qmax) * spec.scale


@jax.custom_vjp
def fake_quant_ste(x: jax.Array) -> jax.Array:
  """Fake quantisation with a straight-through gradient, as used in QAT training loops."""
  return fake_quant(x)


def _ste_fwd(x):
  return fake_quant(x), None


def _ste_bwd(_, g):
  return (g,)


fake_quant_ste.defvjp(_ste_fwd, _ste_bwd)


class FakeQuantTest:
  """Minimal test driver; the CI runs ``python -m`` on this file."""

  def test_matches_reference(self):
    fn, args, _ = target()
    assert bool(jnp.array_equal(fn(*args), expected()))

  def test_bits_8(self):
    x = _x()
    spec = QuantSpec(bits=8)
    got = fake_quant(x, spec, interpret=True)
    assert bool(jnp.array_equal(got, fake_quant_reference(x, spec)))


if __name__ == "__main__":
  suite = FakeQuantTest()
  for name in sorted(n for n in dir(suite) if n.startswith("test_")):
    getattr(suite, name)()
    print(name, "ok")
