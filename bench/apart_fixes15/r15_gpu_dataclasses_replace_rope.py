"""Rotary position embedding kernel for the long-context ablation.

The ablation derives its configs from a frozen base with `dataclasses.replace`, e.g. an f32
rotation stage for bf16 activations. The rotation is staged in shared memory in
`cfg.stage_dtype` before the cast back.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class RopeConfig:
  head_dim: int = 128
  block_tokens: int = 64
  stage_dtype: jnp.dtype = jnp.bfloat16

  def stage_type(self):
    return plgpu.SMEM((self.block_tokens, self.head_dim), self.stage_dtype)


BASE = RopeConfig()
ABLATIONS = {
    "base": BASE,
    "f32_stage": dataclasses.replace(BASE, stage_dtype=jnp.float32),
    "short_blocks": dataclasses.replace(BASE, block_tokens=64, stage_dtype=jnp.float32),
}


def _rope_body(x_ref, cos_ref, sin_ref, rot_ref, o_ref, *, cfg):
  block = jax.lax.axis_index("tokens")
  rows = pl.ds(block * cfg.block_tokens, cfg.block_tokens)
  stage = pl.get_global(cfg.stage_type())
  x = x_ref[rows, :].astype(cfg.stage_dtype)
  rotated = rot_ref[rows, :].astype(cfg.stage_dtype)
  stage[...] = x * cos_ref[rows, :].astype(cfg.stage_dtype) + rotated * sin_ref[
      rows, :
  ].astype(cfg.stage_dtype)
  o_ref[rows, :] = stage[...].astype(o_ref.dtype)


def apply_rope(x, cos, sin, rotated_half, *, variant="f32_stage"):
  cfg = ABLATIONS[variant]
  return plgpu.kernel(
      functools.partial(_rope_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(x.shape[0] // cfg.block_tokens,),
      grid_names=("tokens",),
  )(x, cos, sin, rotated_half)


def target():
  spec = jax.ShapeDtypeStruct((256, 128), jnp.float32)
  return jax.jit(apply_rope, static_argnames="variant"), (spec, spec, spec, spec), "cuda"


if __name__ == "__main__":
  x = jnp.ones((256, 128), jnp.float32)
  for name in ABLATIONS:
    if ABLATIONS[name].stage_dtype == jnp.float32:
      print(name, apply_rope(x, x, x, x, variant=name).sum())
