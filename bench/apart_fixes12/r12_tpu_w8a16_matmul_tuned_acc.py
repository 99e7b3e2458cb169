"""Weight-only int8 matmul (w8a16) for TPU: `x @ (w_q * scale)` with a K-blocked f32 accumulator.

Block sizes come from a tuning table keyed by `(dtype, (m, n, k))`; `get_default_config` falls back to
the largest blocks dividing the problem. BlockSpecs are built from the config in one place.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class KernelConfig:
  bm: int
  bn: int
  bk: int


TUNED = {
    ("bfloat16", (512, 1024, 2048)): KernelConfig(256, 512, 512),
    ("bfloat16", (256, 512, 1024)): KernelConfig(128, 256, 512),
    ("float32", (256, 512, 1024)): KernelConfig(128, 256, 256),
}


def get_default_config(dtype, m: int, n: int, k: int) -> KernelConfig:
  if (hit := TUNED.get((jnp.dtype(dtype).name, (m, n, k)))) is not None:
    return hit
  pick = lambda dim, cands: next(c for c in cands if dim % c == 0)
  return KernelConfig(pick(m, (256, 128, 8)), pick(n, (512, 256, 128)), pick(k, (512, 256, 128)))


def _w8a16_kernel(x_ref, wq_ref, scale_ref, o_ref):
  k = pl.program_id(2)
  acc = pl.get_global(pltpu.VMEM(o_ref.shape, jnp.float32))

  @pl.when(k == 0)
  def _init():
    acc[...] = jnp.zeros_like(acc)

  w = wq_ref[...].astype(x_ref.dtype)
  acc[...] += jnp.dot(x_ref[...], w, preferred_element_type=jnp.float32)

  @pl.when(k == pl.num_programs(2) - 1)
  def _store():
    o_ref[...] = (acc[...] * scale_ref[...]).astype(o_ref.dtype)


def _block_specs(cfg: KernelConfig):
  index_maps = {
      "x": ((cfg.bm, cfg.bk), lambda i, j, k: (i, k)),
      "wq": ((cfg.bk, cfg.bn), lambda i, j, k: (k, j)),
      "scale": ((1, cfg.bn), lambda i, j, k: (0, j)),
  }
  return [pl.BlockSpec(shape, index_map) for shape, index_map in index_maps.values()]


@functools.partial(jax.jit, static_argnames=("cfg",))
def w8a16_matmul(x, w_q, scale, cfg: KernelConfig | None = None):
  m, k = x.shape
  n = w_q.shape[1]
  cfg = cfg or get_default_config(x.dtype, m, n, k)
  return pl.pallas_call(
      _w8a16_kernel,
      out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
      grid=(m // cfg.bm, n // cfg.bn, k // cfg.bk),
      in_specs=_block_specs(cfg),
      out_specs=pl.BlockSpec((cfg.bm, cfg.bn), lambda i, j, k: (i, j)),
      compiler_params=pltpu.CompilerParams(
          dimension_semantics=("parallel", "parallel", "arbitrary")),
  )(x, w_q, scale)


def target():
  x = jax.ShapeDtypeStruct((256, 1024), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((1024, 512), jnp.int8)
  s = jax.ShapeDtypeStruct((1, 512), jnp.float32)
  return w8a16_matmul, (x, w, s), "tpu"
