"""Block-ordered prefix scaling on Hopper, ported from the TPU version.

The completion flag comes from a `sync` helper that was written for the TPU port and kept its
semaphore type; the kernel itself is Mosaic GPU.
"""
# fix-rate: kind=gpu_semaphore_type meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def completion_flag():
  """A grid-wide counter every block may signal (kept from the TPU port)."""
  return pl.get_global(pltpu.SemaphoreType.REGULAR)


@dataclasses.dataclass(frozen=True)
class ChainConfig:
  block: int = 128
  scale: float = 0.5

  def num_blocks(self, n: int) -> int:
    if n % self.block:
      raise ValueError(f"length {n} is not a multiple of {self.block}")
    return n // self.block


def _chain_body(cfg: ChainConfig, x_ref, out_ref):
  i = jax.lax.axis_index("chain")
  rows = pl.ds(i * cfg.block, cfg.block)
  done = completion_flag()

  # A turnstile: every block but the first takes one pass before publishing its tile.
  @pl.when(i > 0)
  def _take_pass():
    pl.semaphore_wait(done, 1)

  out_ref[rows] = x_ref[rows] * cfg.scale
  pl.semaphore_signal(done, 1)


@functools.partial(jax.jit, static_argnames=("cfg",))
def chained_scale(x: jax.Array, cfg: ChainConfig = ChainConfig()) -> jax.Array:
  (n,) = x.shape
  return plgpu.kernel(
      functools.partial(_chain_body, cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(cfg.num_blocks(n),),
      grid_names=("chain",),
  )(x)


def target():
  return chained_scale, (jax.ShapeDtypeStruct((512,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(chained_scale(jnp.arange(512, dtype=jnp.float32))[-4:])
