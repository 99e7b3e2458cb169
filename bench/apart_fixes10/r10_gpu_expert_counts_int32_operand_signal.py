"""Expert-capacity bookkeeping on Hopper: blocks copy their token slice, then report to block 0.

The arrival counter is an int32 zero created by the launcher and passed in like any other operand.
"""
# fix-rate: kind=get_global meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class CapacityConfig:
  block_tokens: int = 256
  capacity_factor: float = 1.25

  def num_blocks(self, tokens: int) -> int:
    return pl.cdiv(tokens, self.block_tokens)


class ExpertCapacityKernel:
  def __init__(self, config: CapacityConfig):
    self.config = config

  def body(self, weights_ref, arrivals_ref, out_ref):
    cfg = self.config
    b = jax.lax.axis_index("token_blocks")
    span = pl.ds(b * cfg.block_tokens, cfg.block_tokens)
    out_ref[span] = weights_ref[span] * cfg.capacity_factor
    pl.semaphore_signal(arrivals_ref, 1)

    @pl.when(b == 0)
    def _all_reported():
      pl.semaphore_wait(arrivals_ref, cfg.num_blocks(weights_ref.shape[0]))

  def launch(self, weights: jax.Array) -> jax.Array:
    (tokens,) = weights.shape
    arrivals = jnp.zeros((), jnp.int32)
    return plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct(weights.shape, weights.dtype),
        grid=(self.config.num_blocks(tokens),),
        grid_names=("token_blocks",),
    )(weights, arrivals)


@functools.cache
def _kernel_for(capacity_factor: float) -> ExpertCapacityKernel:
  return ExpertCapacityKernel(CapacityConfig(capacity_factor=capacity_factor))


@functools.partial(jax.jit, static_argnames=("capacity_factor",))
def scale_to_capacity(weights: jax.Array, capacity_factor: float = 1.25) -> jax.Array:
  return _kernel_for(capacity_factor).launch(weights)


def target():
  return scale_to_capacity, (jax.ShapeDtypeStruct((1024,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(scale_to_capacity(jnp.ones((1024,), jnp.float32), capacity_factor=2.0)[:4])
