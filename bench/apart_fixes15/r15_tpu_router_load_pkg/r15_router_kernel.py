"""TPU kernel counting top-1 routed tokens per expert, streamed over token blocks."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r15_router_config import EXPERT_LANES, RouterConfig


def _expert_load_body(logits_ref, load_ref, *, cfg: RouterConfig):
  running = pl.get_global(cfg.load_buffer())

  @pl.when(pl.program_id(0) == 0)
  def _():
    running[...] = jnp.zeros(running.shape, jnp.float32)

  lane = jax.lax.broadcasted_iota(jnp.int32, logits_ref.shape, 1)
  logits = jnp.where(lane < cfg.num_experts, logits_ref[...], -jnp.inf)
  top1 = (logits == jnp.max(logits, axis=1, keepdims=True)).astype(jnp.float32)
  running[...] += jnp.sum(top1, axis=0, keepdims=True)

  @pl.when(pl.program_id(0) == pl.num_programs(0) - 1)
  def _():
    load_ref[...] = running[...]


def expert_load(router_logits, cfg: RouterConfig):
  tokens = router_logits.shape[0]
  return pl.pallas_call(
      functools.partial(_expert_load_body, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((1, EXPERT_LANES), jnp.float32),
      grid=(tokens // cfg.block_tokens,),
      in_specs=[pl.BlockSpec((cfg.block_tokens, EXPERT_LANES), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, EXPERT_LANES), lambda i: (0, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
  )(router_logits)
