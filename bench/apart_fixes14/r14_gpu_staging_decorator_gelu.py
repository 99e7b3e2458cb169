"""Fused bias + tanh-GELU epilogue for the MLP up-projection (Mosaic GPU).

The epilogue bodies share a small decorator, `with_f32_staging`, so that every
half-precision body gets an f32 tile to widen into before the transcendental.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

_SQRT_2_OVER_PI = 0.7978845608028654


@dataclasses.dataclass(frozen=True)
class EpilogueConfig:
  hidden: int = 512
  dtype: str = "bfloat16"
  approximate: bool = True

  @property
  def out_type(self) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct((self.hidden,), jnp.dtype(self.dtype))


def with_f32_staging(width: int):
  """Hands the decorated body an f32 SMEM tile of `width` elements as its last ref."""

  def decorate(body):
    @functools.wraps(body)
    def wrapped(*refs):
      staging = pl.get_global(plgpu.SMEM((width,), jnp.float32))
      return body(*refs, staging)

    return wrapped

  return decorate


def _gelu(v, approximate: bool):
  if approximate:
    inner = _SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)
    return 0.5 * v * (1.0 + jnp.tanh(inner))
  return v * jax.nn.sigmoid(1.702 * v)


def make_bias_gelu(cfg: EpilogueConfig):
  @with_f32_staging(cfg.hidden)
  def bias_gelu_body(h_ref, bias_ref, out_ref, staging):
    staging[...] = h_ref[...].astype(jnp.float32) + bias_ref[...].astype(jnp.float32)
    out_ref[...] = _gelu(staging[...], cfg.approximate).astype(out_ref.dtype)

  return plgpu.kernel(bias_gelu_body, out_type=cfg.out_type)


_CONFIGS = {
    "llama-mlp-512": EpilogueConfig(hidden=512),
    "tiny-256": EpilogueConfig(hidden=256, approximate=False),
}


@functools.partial(jax.jit, static_argnames=("preset",))
def bias_gelu(h: jax.Array, bias: jax.Array, *, preset: str = "llama-mlp-512") -> jax.Array:
  return make_bias_gelu(_CONFIGS[preset])(h, bias)


def target():
  cfg = _CONFIGS["llama-mlp-512"]
  args = (jax.ShapeDtypeStruct((cfg.hidden,), jnp.bfloat16),) * 2
  return functools.partial(bias_gelu, preset="llama-mlp-512"), args, "cuda"


if __name__ == "__main__":
  h = jnp.linspace(-3, 3, 512, dtype=jnp.bfloat16)
  print(bias_gelu(h, jnp.zeros_like(h))[:8])
