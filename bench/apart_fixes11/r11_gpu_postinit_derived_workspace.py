"""Grouped top-k score rescaling for a Hopper MoE router.

`RouterPlan` is written in the attrs style: frozen, with derived fields filled in
`__post_init__` (block count, the per-block scratch types). Blocks stash their scaled scores
in a global workspace before writing the clipped result.
"""
# fix-rate: kind=output meaning=preserving

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class RouterPlan:
  num_experts: int
  block: int = 128
  temperature: float = 0.7
  num_blocks: int = dataclasses.field(init=False)
  workspace_type: Any = dataclasses.field(init=False)

  def __post_init__(self):
    if self.num_experts % self.block:
      raise ValueError("num_experts must be a multiple of block")
    object.__setattr__(self, "num_blocks", self.num_experts // self.block)
    object.__setattr__(self, "workspace_type", plgpu.GMEM((self.num_experts,), jnp.float32))


def _router_body(plan: RouterPlan, logits_ref, bias_ref, out_ref):
  b = jax.lax.axis_index("experts")
  cols = pl.ds(b * plan.block, plan.block)
  workspace = pl.get_global(plan.workspace_type)
  workspace[cols] = logits_ref[cols].astype(jnp.float32) / plan.temperature
  scores = workspace[cols] + bias_ref[cols]
  out_ref[cols] = jnp.clip(scores, -10.0, 10.0).astype(out_ref.dtype)


def rescale_router_logits(logits, bias, plan: RouterPlan):
  return plgpu.kernel(
      lambda *refs: _router_body(plan, *refs),
      out_type=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
      grid=(plan.num_blocks,),
      grid_names=("experts",),
  )(logits, bias)


PLAN = RouterPlan(num_experts=512)


def target():
  args = (jax.ShapeDtypeStruct((512,), jnp.bfloat16), jax.ShapeDtypeStruct((512,), jnp.float32))
  return lambda lg, bs: rescale_router_logits(lg, bs, PLAN), args, "cuda"
