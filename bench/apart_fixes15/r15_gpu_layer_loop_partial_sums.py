"""Per-layer activation statistics for a probing study, one Mosaic GPU kernel per layer.

The study sweeps a decoder stack; each layer has its own width, so `build_layer_kernels`
builds one launcher per layer in a loop. Each kernel writes the scaled activations and keeps
their squares in a global-memory workspace that the host side reduces into second moments later.
"""
# fix-rate: kind=output meaning=preserving

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class LayerSpec(NamedTuple):
  name: str
  width: int
  scale: float


LAYERS = (
    LayerSpec("attn_out", 128, 0.5),
    LayerSpec("mlp_in", 256, 1.0),
    LayerSpec("mlp_out", 128, 2.0),
)
BLOCK_ROWS = 64


def _probe_body(x_ref, o_ref, *, spec, num_tokens):
  block = jax.lax.axis_index("block")
  rows = pl.ds(block * BLOCK_ROWS, BLOCK_ROWS)
  squares = pl.get_global(plgpu.GMEM((num_tokens, spec.width), jnp.float32))
  y = x_ref[rows, :] * spec.scale
  o_ref[rows, :] = y
  squares[rows, :] = y * y


def build_layer_kernels(num_tokens):
  num_blocks = num_tokens // BLOCK_ROWS
  kernels = {}
  for spec in LAYERS:
    kernels[spec.name] = plgpu.kernel(
        functools.partial(_probe_body, spec=spec, num_tokens=num_tokens),
        out_type=jax.ShapeDtypeStruct((num_tokens, spec.width), jnp.float32),
        grid=(num_blocks,),
        grid_names=("block",),
    )
  return kernels


def probe_stack(activations):
  kernels = build_layer_kernels(next(iter(activations.values())).shape[0])
  return {name: kernels[name](x) for name, x in activations.items()}


def target():
  acts = {s.name: jax.ShapeDtypeStruct((256, s.width), jnp.float32) for s in LAYERS}
  return probe_stack, (acts,), "cuda"


if __name__ == "__main__":
  acts = {s.name: jnp.ones((256, s.width)) for s in LAYERS}
  print({k: v.shape for k, v in jax.jit(probe_stack)(acts).items()})
