"""Single-query decode attention over a padded KV cache (TPU), online softmax across KV blocks.

`lengths[b]` (scalar prefetch) masks the padded tail of sequence `b`. The running max, denominator and
accumulator of the online softmax live in a `SoftmaxState` tuple allocated once per kernel.
"""
# fix-rate: clean

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NEG_INF = -1e30


class SoftmaxState(NamedTuple):
  m: jax.Array
  l: jax.Array
  acc: jax.Array


def state_scratch(num_q: int, head_dim: int) -> list:
  f32 = jnp.float32
  return [pltpu.VMEM((num_q, 128), f32), pltpu.VMEM((num_q, 128), f32),
          pltpu.VMEM((num_q, head_dim), f32)]


@dataclasses.dataclass(frozen=True)
class DecodeConfig:
  block_kv: int
  num_q: int = 8


TUNING = {(jnp.dtype("bfloat16"), 128): DecodeConfig(block_kv=512),
          (jnp.dtype("bfloat16"), 256): DecodeConfig(block_kv=256)}


def get_default_config(dtype, head_dim) -> DecodeConfig:
  return TUNING.get((jnp.dtype(dtype), head_dim), DecodeConfig(block_kv=128))


def _decode_kernel(lengths_ref, q_ref, k_ref, v_ref, o_ref, *state, cfg: DecodeConfig, sm_scale: float):
  b, j = pl.program_id(0), pl.program_id(1)
  st = SoftmaxState(*state)

  @pl.when(j == 0)
  def _init():
    st.m[...] = jnp.full_like(st.m, NEG_INF)
    st.l[...] = jnp.zeros_like(st.l)
    st.acc[...] = jnp.zeros_like(st.acc)

  q = q_ref[0].astype(jnp.float32) * sm_scale
  s = jnp.dot(q, k_ref[0].astype(jnp.float32).T, preferred_element_type=jnp.float32)
  pos = j * cfg.block_kv + jax.lax.broadcasted_iota(jnp.int32, s.shape, 1)
  s = jnp.where(pos < lengths_ref[b], s, NEG_INF)
  m_prev = st.m[:, :1]
  m_new = jnp.maximum(m_prev, jnp.max(s, axis=1, keepdims=True))
  p = jnp.exp(s - m_new)
  alpha = jnp.exp(m_prev - m_new)
  st.l[...] = jnp.broadcast_to(alpha * st.l[:, :1] + jnp.sum(p, axis=1, keepdims=True), st.l.shape)
  st.acc[...] = alpha * st.acc[...] + jnp.dot(p, v_ref[0].astype(jnp.float32))
  st.m[...] = jnp.broadcast_to(m_new, st.m.shape)

  @pl.when(j == pl.num_programs(1) - 1)
  def _finish():
    o_ref[0] = (st.acc[...] / st.l[:, :1]).astype(o_ref.dtype)


@jax.jit
def decode_attention(lengths, q, k, v):
  batch, num_q, head_dim = q.shape
  cfg = get_default_config(q.dtype, head_dim)
  kv_len = k.shape[1]
  kv_spec = pl.BlockSpec((1, cfg.block_kv, head_dim), lambda b, j, lens: (b, j, 0))
  q_spec = pl.BlockSpec((1, num_q, head_dim), lambda b, j, lens: (b, 0, 0))
  return pl.pallas_call(
      functools.partial(_decode_kernel, cfg=cfg, sm_scale=head_dim ** -0.5),
      out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(batch, kv_len // cfg.block_kv),
          in_specs=[q_spec, kv_spec, kv_spec],
          out_specs=q_spec,
          scratch_shapes=state_scratch(num_q, head_dim),
      ),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(lengths, q, k, v)


def target():
  lengths = jax.ShapeDtypeStruct((4,), jnp.int32)
  q = jax.ShapeDtypeStruct((4, 8, 128), jnp.bfloat16)
  kv = jax.ShapeDtypeStruct((4, 2048, 128), jnp.bfloat16)
  return decode_attention, (lengths, q, kv, kv), "tpu"
