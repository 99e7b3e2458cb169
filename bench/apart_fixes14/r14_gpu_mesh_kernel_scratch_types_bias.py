"""Bias add + scale for the LoRA B-projection epilogue, ported to `pl.kernel` (Mosaic GPU).

The op library moved from `plgpu.kernel` to `pl.kernel` over a `plgpu.Mesh`
(so the same launch helper serves TPU meshes); the f32 staging tile was
carried over as `scratch_types`.
"""
# fix-rate: kind=run_scoped meaning=preserving

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class LoraEpilogue:
  rank_scale: float
  block: int = 256

  def mesh(self, n: int) -> plgpu.Mesh:
    return plgpu.Mesh(grid=(n // self.block,), grid_names=("tiles",))

  def scratch(self) -> list:
    return [plgpu.SMEM((self.block,), jnp.float32)]


def _epilogue_body(y_ref, bias_ref, o_ref, staged, *, spec: LoraEpilogue):
  t = jax.lax.axis_index("tiles")
  span = pl.ds(t * spec.block, spec.block)
  staged[...] = y_ref[span].astype(jnp.float32) * spec.rank_scale
  staged[...] += bias_ref[span].astype(jnp.float32)
  o_ref[span] = staged[...].astype(o_ref.dtype)


def mesh_launch(body: Callable, spec: LoraEpilogue, n: int, dtype):
  return pl.kernel(
      functools.partial(body, spec=spec),
      out_type=jax.ShapeDtypeStruct((n,), dtype),
      mesh=spec.mesh(n),
      scratch_types=spec.scratch(),
  )


@functools.partial(jax.jit, static_argnames=("alpha", "rank"))
def lora_epilogue(y, bias, *, alpha: float = 16.0, rank: int = 8):
  spec = LoraEpilogue(rank_scale=alpha / rank)
  return mesh_launch(_epilogue_body, spec, y.shape[0], y.dtype)(y, bias)


def target():
  args = (jax.ShapeDtypeStruct((1024,), jnp.bfloat16),) * 2
  return lora_epilogue, args, "cuda"


if __name__ == "__main__":
  y = jnp.ones((1024,), jnp.bfloat16)
  print(lora_epilogue(y, y)[:4])
