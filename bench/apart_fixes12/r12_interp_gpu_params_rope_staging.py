"""Rotary-embedding apply for Mosaic GPU, validated on CPU through the Mosaic GPU interpreter.

`out = x * cos + x_rot * sin`, where the caller passes `x_rot` (the half-rotated input) alongside
`x`. The f32 products are staged in shared memory. `--interpret` (default when no GPU is present) runs
the kernel under `plgpu.InterpretGPUParams()`.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental import pallas as pl


@dataclasses.dataclass(frozen=True)
class RopeConfig:
  block_tokens: int
  head_dim: int

  @property
  def tile(self):
    return (self.block_tokens, self.head_dim)


def get_default_config(tokens: int, head_dim: int) -> RopeConfig:
  return RopeConfig(block_tokens=8 if tokens % 8 == 0 else tokens, head_dim=head_dim)


def _rope_body(x_gmem, xr_gmem, cos_gmem, sin_gmem, o_gmem, x_s, xr_s, cos_s, sin_s, loaded, *, cfg):
  t = jax.lax.axis_index("tokens")
  rows = pl.ds(t * cfg.block_tokens, cfg.block_tokens)
  for src, dst in ((x_gmem, x_s), (xr_gmem, xr_s), (cos_gmem, cos_s), (sin_gmem, sin_s)):
    plgpu.copy_gmem_to_smem(src.at[rows], dst, loaded)
  plgpu.barrier_wait(loaded)
  rotated = pl.get_global(plgpu.SMEM(cfg.tile, jnp.float32))
  rotated[...] = x_s[...].astype(jnp.float32) * cos_s[...] + xr_s[...].astype(jnp.float32) * sin_s[...]
  x_s[...] = rotated[...].astype(x_s.dtype)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(x_s, o_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)


def apply_rope(x, x_rot, cos, sin, *, interpret=False):
  tokens, head_dim = x.shape
  cfg = get_default_config(tokens, head_dim)
  return plgpu.kernel(
      functools.partial(_rope_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=[plgpu.SMEM(cfg.tile, x.dtype), plgpu.SMEM(cfg.tile, x.dtype),
                     plgpu.SMEM(cfg.tile, jnp.float32), plgpu.SMEM(cfg.tile, jnp.float32),
                     plgpu.Barrier(num_arrivals=4)],
      grid=(tokens // cfg.block_tokens,),
      grid_names=("tokens",),
      interpret=plgpu.InterpretGPUParams() if interpret else False,
  )(x, x_rot, cos, sin)


def _inputs(tokens=16, head_dim=128):
  x = jnp.arange(tokens * head_dim, dtype=jnp.float32).reshape(tokens, head_dim) % 7 - 3
  x_rot = jnp.concatenate([-x[:, head_dim // 2:], x[:, :head_dim // 2]], axis=1)
  cos = jnp.full((tokens, head_dim), 0.5, jnp.float32)
  sin = jnp.full((tokens, head_dim), 0.25, jnp.float32)
  return x, x_rot, cos, sin


def expected():
  x, x_rot, cos, sin = (np.asarray(a) for a in _inputs())
  return x * cos + x_rot * sin


def target():
  return functools.partial(apply_rope, interpret=True), _inputs(), "interpret"


if __name__ == "__main__":
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--interpret", action=argparse.BooleanOptionalAction,
                      default=jax.default_backend() != "gpu")
  args = parser.parse_args()
  got = jax.jit(functools.partial(apply_rope, interpret=args.interpret))(*_inputs())
  np.testing.assert_array_equal(np.asarray(got), expected())
  print("rope ok")
