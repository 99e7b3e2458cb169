"""Residual gating `out = x + sigmoid(g) * y` for Mosaic GPU, with a small compatibility layer.

Older jax releases spelled some Pallas entry points differently, so this module looks them up
with `getattr` once at import time and uses whatever the installed release provides.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# `get_global` lived on the Mosaic GPU module in some pre-releases.
_get_global = getattr(pl, "get_global", None) or getattr(plgpu, "get_global")
_kernel = getattr(plgpu, "kernel")


@dataclasses.dataclass(frozen=True)
class GateConfig:
  block_rows: int = 64
  width: int = 256
  dtype: jnp.dtype = jnp.float32

  def num_blocks(self, rows: int) -> int:
    if rows % self.block_rows:
      raise ValueError(f"rows={rows} not a multiple of {self.block_rows}")
    return rows // self.block_rows


def _make_body(cfg: GateConfig):
  def body(x_gmem, y_gmem, g_gmem, out_gmem, barrier):
    rows = pl.ds(jax.lax.axis_index("blk") * cfg.block_rows, cfg.block_rows)
    gated = _get_global(plgpu.SMEM((cfg.block_rows, cfg.width), cfg.dtype))
    plgpu.copy_gmem_to_smem(g_gmem.at[rows], gated, barrier)
    plgpu.barrier_wait(barrier)
    gate = 1.0 / (1.0 + jnp.exp(-gated[...]))
    gated[...] = x_gmem[rows, :] + gate * y_gmem[rows, :]
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(gated, out_gmem.at[rows])
    plgpu.wait_smem_to_gmem(0)

  return body


def gated_residual(x, y, g, cfg: GateConfig = GateConfig()):
  if x.shape != y.shape or x.shape != g.shape:
    raise ValueError(f"shapes differ: {x.shape} {y.shape} {g.shape}")
  return _kernel(
      _make_body(cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, cfg.dtype),
      grid=(cfg.num_blocks(x.shape[0]),),
      grid_names=("blk",),
      scratch_types=[plgpu.Barrier(num_arrivals=1)],
  )(x, y, g)


def reference(x, y, g):
  return x + jax.nn.sigmoid(g) * y


def target():
  spec = jax.ShapeDtypeStruct((512, 256), jnp.float32)
  return gated_residual, (spec, spec, spec), "cuda"


if __name__ == "__main__":
  keys = jax.random.split(jax.random.key(7), 3)
  x, y, g = (jax.random.normal(k, (512, 256), jnp.float32) for k in keys)
  err = jnp.max(jnp.abs(jax.jit(gated_residual)(x, y, g) - reference(x, y, g)))
  print(f"max error {float(err):.3e}")
