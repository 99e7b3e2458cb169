"""Gated MLP block written in the Flax `setup()` / `__call__` style, without flax.

The research repo keeps model code importable on machines without flax: modules are plain
classes with a `setup()` that derives static sizes and a `__call__` that runs the layer.
The gate is fused into one Mosaic GPU kernel: `silu(x * w_gate) * (x * w_up)`.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class GatedMLPConfig:
  features: int = 128
  block_rows: int = 64
  compute_dtype: jnp.dtype = jnp.float32


class GatedMLP:
  """y = silu(x * w_gate) * (x * w_up), row-blocked over the token axis."""

  def __init__(self, config: GatedMLPConfig, name: str = "mlp"):
    self.config = config
    self.name = name
    self._is_setup = False

  def setup(self):
    cfg = self.config
    self.block_shape = (cfg.block_rows, cfg.features)
    self.gate_tile = plgpu.SMEM(self.block_shape, cfg.compute_dtype)
    self._is_setup = True

  def _gate_body(self, x_ref, wg_ref, wu_ref, o_ref):
    block = jax.lax.axis_index("rows")
    rows = pl.ds(block * self.config.block_rows, self.config.block_rows)
    gate = pl.get_global(self.gate_tile)
    gate[...] = x_ref[rows, :] * wg_ref[rows, :]
    g = gate[...]
    o_ref[rows, :] = (g * jax.nn.sigmoid(g)) * (x_ref[rows, :] * wu_ref[rows, :])

  def __call__(self, x, w_gate, w_up):
    if not self._is_setup:
      self.setup()
    num_blocks = x.shape[0] // self.config.block_rows
    fused = plgpu.kernel(
        self._gate_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(num_blocks,),
        grid_names=("rows",),
    )
    return fused(x, w_gate, w_up)


class TransformerFFN:
  """Pre-norm residual wrapper, as the decoder layers use it."""

  def __init__(self, features: int):
    self.mlp = GatedMLP(GatedMLPConfig(features=features), name="ffn")

  def __call__(self, x, w_gate, w_up):
    h = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)
    return x + self.mlp(h, w_gate, w_up)


def target():
  layer = GatedMLP(GatedMLPConfig())
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return layer, (spec, spec, spec), "cuda"


if __name__ == "__main__":
  ffn = TransformerFFN(128)
  x = jnp.ones((256, 128), jnp.float32)
  print(jax.jit(ffn)(x, x, x).shape)
