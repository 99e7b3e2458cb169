"""Gradient clipping by value with a staged f32 tile, TPU kernel with a CPU fallback.

Whether to interpret is decided once per process from the first device's platform
(`_interpret()` is cached), so tests and notebooks on a laptop run the same call.
"""

# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@functools.cache
def _interpret() -> bool:
  return jax.devices()[0].platform != "tpu"


@dataclasses.dataclass(frozen=True)
class ClipConfig:
  clip: float = 2.0
  block_rows: int = 8

  def block(self, cols: int) -> tuple[int, int]:
    return (self.block_rows, cols)


def _clip_kernel(cfg: ClipConfig, g_ref, o_ref):
  staged = pl.get_global(pltpu.VMEM(cfg.block(g_ref.shape[-1]), jnp.float32))
  staged[...] = g_ref[...].astype(jnp.float32)
  staged[...] = jnp.clip(staged[...], -cfg.clip, cfg.clip)
  o_ref[...] = staged[...].astype(o_ref.dtype)


def clip_by_value(g, cfg: ClipConfig = ClipConfig()):
  rows, cols = g.shape
  spec = pl.BlockSpec(cfg.block(cols), lambda i: (i, 0))
  return pl.pallas_call(
      functools.partial(_clip_kernel, cfg),
      grid=(rows // cfg.block_rows,),
      in_specs=[spec],
      out_specs=spec,
      out_shape=jax.ShapeDtypeStruct(g.shape, g.dtype),
      interpret=_interpret(),
  )(g)


@jax.jit
def clip_tree(grads):
  return jax.tree.map(clip_by_value, grads)


def _example():
  g = (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128) % 9) - 4.0
  return ({"w": g, "b": g[:8] * 2.0},)


def flat_clipped(grads):
  """The clipped leaves, flattened in tree order (for logging and tests)."""
  return jnp.concatenate([leaf.ravel() for leaf in jax.tree.leaves(clip_tree(grads))])


def target():
  return flat_clipped, _example(), "interpret"


def expected():
  (grads,) = _example()
  return np.concatenate([np.clip(np.asarray(grads[k]), -2.0, 2.0).ravel() for k in ("b", "w")])
