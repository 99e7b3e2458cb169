"""Elementwise activation kernels built from a base class and a staging mixin (Mosaic GPU).

Every half-precision activation widens its block to f32 first; the shared
`F32StagingMixin` gives the kernels their widening helper.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import abc
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class F32StagingMixin:
  """Widening helper shared by every half-precision activation."""

  block: int

  def widen(self, src_ref):
    staging = pl.get_global(plgpu.SMEM((self.block,), jnp.float32))
    staging[...] = src_ref[...].astype(jnp.float32)
    return staging


class ActivationKernel(abc.ABC):
  grid_name = "blocks"

  def __init__(self, block: int = 256):
    self.block = block

  @abc.abstractmethod
  def apply(self, v: jax.Array) -> jax.Array:
    ...

  def body(self, x_ref, o_ref):
    i = jax.lax.axis_index(self.grid_name)
    span = pl.ds(i * self.block, self.block)
    staging = self.widen(x_ref.at[span])
    o_ref[span] = self.apply(staging[...]).astype(o_ref.dtype)

  def __call__(self, x: jax.Array) -> jax.Array:
    (n,) = x.shape
    return plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(n // self.block,),
        grid_names=(self.grid_name,),
    )(x)


class Swish(F32StagingMixin, ActivationKernel):
  def __init__(self, beta: float = 1.0, block: int = 256):
    super().__init__(block)
    self.beta = beta

  def apply(self, v):
    return v * jax.nn.sigmoid(self.beta * v)


class QuickGelu(F32StagingMixin, ActivationKernel):
  def apply(self, v):
    return v * jax.nn.sigmoid(1.702 * v)


ACTIVATIONS = {
    "swish": Swish(),
    "swish_b2": Swish(beta=2.0, block=128),
    "quick_gelu": QuickGelu(),
}


@functools.partial(jax.jit, static_argnames=("name",))
def activation(x: jax.Array, name: str) -> jax.Array:
  return ACTIVATIONS[name](x)


def target():
  return functools.partial(activation, name="swish"), (jax.ShapeDtypeStruct((1024,), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-4, 4, 1024, dtype=jnp.bfloat16)
  for name in ACTIVATIONS:
    print(name, activation(x, name)[:3])
