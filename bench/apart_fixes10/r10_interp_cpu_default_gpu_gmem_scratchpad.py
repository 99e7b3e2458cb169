"""Squared ReLU with a saved pre-activation, written for Mosaic GPU; on a host without a GPU it is interpreted.

`INTERPRET` follows the default backend so the same module runs in CI on the CPU.
"""
# fix-rate: kind=output meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

INTERPRET = plgpu.InterpretGPUParams() if jax.default_backend() == "cpu" else False


@dataclasses.dataclass(frozen=True)
class ActivationSettings:
  block: int = 64
  squared: bool = True


def _activation(x, squared: bool):
  r = jnp.maximum(x, 0.0)
  return r * r if squared else r


def _act_body(settings: ActivationSettings, x_ref, bias_ref, out_ref):
  i = jax.lax.axis_index("blocks")
  span = pl.ds(i * settings.block, settings.block)
  # Pre-activation kept in global memory for the backward pass of the fused layer.
  preact = pl.get_global(plgpu.GMEM(x_ref.shape, jnp.float32))
  preact[span] = x_ref[span] + bias_ref[span]
  out_ref[span] = _activation(preact[span], settings.squared)


def bias_activation(x: jax.Array, bias: jax.Array, settings: ActivationSettings = ActivationSettings()) -> jax.Array:
  (n,) = x.shape
  return plgpu.kernel(
      functools.partial(_act_body, settings),
      out_type=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      grid=(n // settings.block,),
      grid_names=("blocks",),
      interpret=INTERPRET,
  )(x, bias)


def _inputs():
  x = np.linspace(-3.0, 3.0, 256, dtype=np.float32)
  return x, np.full_like(x, 0.25)


def target():
  x, b = _inputs()
  return jax.jit(bias_activation), (jnp.asarray(x), jnp.asarray(b)), "interpret"


def expected():
  x, b = _inputs()
  r = np.maximum(x + b, 0.0)
  return r * r


if __name__ == "__main__":
  x, b = _inputs()
  print(np.asarray(jax.jit(bias_activation)(jnp.asarray(x), jnp.asarray(b)))[:4])
