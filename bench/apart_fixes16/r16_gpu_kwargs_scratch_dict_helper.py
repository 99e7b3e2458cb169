"""Logit soft-capping epilogue (Mosaic GPU), shared epilogue helpers.

Buffers an epilogue needs are handed over as keyword arguments so the same
helpers serve the fused attention epilogue, which needs more of them.
"""
# fix-rate: kind=scratch meaning=preserving
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SoftcapSettings:
  cap: float = 30.0
  block_rows: int = 64


def _softcap_epilogue(x, o_ref, rows, *, cap, widened):
  widened[...] = x.astype(jnp.float32) / cap
  o_ref[rows, :] = (jnp.tanh(widened[...]) * cap).astype(o_ref.dtype)


def _epilogue_buffers(block_rows, cols):
  return {"widened": pl.get_global(plgpu.SMEM((block_rows, cols), jnp.float32))}


class SoftcapKernel:

  def __init__(self, settings: SoftcapSettings):
    self.settings = settings

  def _body(self, logits_ref, o_ref):
    s = self.settings
    i = jax.lax.axis_index("rows")
    rows = pl.ds(i * s.block_rows, s.block_rows)
    buffers = _epilogue_buffers(s.block_rows, logits_ref.shape[-1])
    _softcap_epilogue(logits_ref[rows, :], o_ref, rows, cap=s.cap, **buffers)

  def __call__(self, logits):
    m, _ = logits.shape
    return plgpu.kernel(
        self._body,
        out_type=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
        grid=(m // self.settings.block_rows,),
        grid_names=("rows",),
    )(logits)


def target():
  kernel = SoftcapKernel(SoftcapSettings(cap=50.0))
  return jax.jit(kernel), (jax.ShapeDtypeStruct((128, 256), jnp.bfloat16),), "cuda"
