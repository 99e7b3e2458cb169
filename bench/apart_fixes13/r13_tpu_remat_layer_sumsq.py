"""Per-feature sum of squares over a sequence, fused into a rematerialised layer on TPU.

The statistic feeds a learned scale; the layer runs under `jax.checkpoint` so the kernel
is replayed in the backward pass instead of saving its output.
"""

# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class SumSqConfig:
  block_seq: int = 256
  block_feat: int = 128


def _sumsq_kernel(x_ref, o_ref):
  s = pl.program_id(1)
  acc = pl.get_global(pltpu.VMEM((8, o_ref.shape[-1]), jnp.float32))

  @pl.when(s == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  x = x_ref[...].astype(jnp.float32)
  acc[...] += jnp.sum((x * x).reshape(-1, 8, x.shape[-1]), axis=0)

  @pl.when(s == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = jnp.sum(acc[...], axis=0, keepdims=True)


def feature_sumsq(x, cfg: SumSqConfig = SumSqConfig()):
  seq, feat = x.shape
  return pl.pallas_call(
      _sumsq_kernel,
      grid=(feat // cfg.block_feat, seq // cfg.block_seq),
      in_specs=[pl.BlockSpec((cfg.block_seq, cfg.block_feat), lambda f, s: (s, f))],
      out_specs=pl.BlockSpec((1, cfg.block_feat), lambda f, s: (0, f)),
      out_shape=jax.ShapeDtypeStruct((1, feat), jnp.float32),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
  )(x)


@functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.nothing_saveable)
def scaled_layer(x, w):
  ms = feature_sumsq(x) / x.shape[0]
  return x * jax.lax.rsqrt(ms + 1e-6).astype(x.dtype) * w


@jax.jit
def forward(x, w):
  return scaled_layer(x, w)


def target():
  args = (jax.ShapeDtypeStruct((1024, 512), jnp.float32), jax.ShapeDtypeStruct((512,), jnp.float32))
  return forward, args, "tpu"
