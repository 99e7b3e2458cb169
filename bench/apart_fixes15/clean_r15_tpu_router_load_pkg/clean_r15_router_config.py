"""Router configs of the MoE load-balancing study; variants derive from BASE with replace()."""

import dataclasses

import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu

EXPERT_LANES = 128  # experts padded to one lane tile


@dataclasses.dataclass(frozen=True)
class RouterConfig:
  num_experts: int = 8
  block_tokens: int = 128
  capacity_factor: float = 1.25

  def load_buffer(self):
    """Running per-expert token count, one lane per (padded) expert."""
    return pltpu.VMEM((1, EXPERT_LANES), jnp.float32)


BASE = RouterConfig()
PRESETS = {
    "base": BASE,
    "wide": dataclasses.replace(BASE, num_experts=64),
    "long_blocks": dataclasses.replace(BASE, block_tokens=256),
}
