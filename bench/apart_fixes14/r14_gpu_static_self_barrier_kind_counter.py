"""Blockwise absmax for fp8 delayed scaling, folded by the last block (Mosaic GPU).

`AmaxReducer` is a frozen dataclass, hashable, so its launcher is jitted with
`self` static. Blocks write their partial absmax vectors, raise the arrival
counter, and block 0 waits for all of them before folding.
"""
# fix-rate: kind=semaphore_kind meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

FP8_E4M3_MAX = 448.0


@dataclasses.dataclass(frozen=True)
class AmaxReducer:
  num_blocks: int = 4
  block: int = 128
  margin: int = 0

  @property
  def arrival_kind(self):
    return plgpu.SemaphoreType.BARRIER

  def _body(self, x_ref, partial_ref, amax_ref):
    blk = jax.lax.axis_index("blk")
    arrivals = pl.get_global(self.arrival_kind)
    x = x_ref[pl.ds(blk * self.block, self.block)].astype(jnp.float32)
    partial_ref[blk] = jnp.abs(x)

    @pl.when(blk != 0)
    def _arrive():
      pl.semaphore_signal(arrivals, 1)

    @pl.when(blk == 0)
    def _fold():
      pl.semaphore_wait(arrivals, self.num_blocks - 1)
      acc = partial_ref[0]
      for b in range(1, self.num_blocks):
        acc = jnp.maximum(acc, partial_ref[b])
      amax_ref[...] = acc

  @functools.partial(jax.jit, static_argnums=0)
  def __call__(self, x: jax.Array) -> jax.Array:
    _, amax = plgpu.kernel(
        self._body,
        out_type=(
            jax.ShapeDtypeStruct((self.num_blocks, self.block), jnp.float32),
            jax.ShapeDtypeStruct((self.block,), jnp.float32),
        ),
        grid=(self.num_blocks,),
        grid_names=("blk",),
    )(x)
    return jnp.max(amax)

  def scale_for(self, amax: jax.Array) -> jax.Array:
    return FP8_E4M3_MAX / (amax * (2.0**self.margin))


ACTIVATION_AMAX = AmaxReducer()
WEIGHT_AMAX = AmaxReducer(num_blocks=8, margin=1)


def target():
  n = ACTIVATION_AMAX.num_blocks * ACTIVATION_AMAX.block
  return ACTIVATION_AMAX, (jax.ShapeDtypeStruct((n,), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  x = jnp.linspace(-3, 5, 512, dtype=jnp.bfloat16)
  amax = ACTIVATION_AMAX(x)
  print(amax, ACTIVATION_AMAX.scale_for(amax))
