"""Softmax-normalise score rows through a shared-memory staging tile declared from a config method.

The staging tile is described by `AttentionConfig.staging(rows)` and declared in `scratch_types`.
"""
# fix-rate: clean

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class AttentionConfig:
  head_dim: int = 128
  block_q: int = 2
  dtype: object = jnp.float32
  softmax_scale: float = 0.125

  def staging(self, rows: int):
    """The shared-memory tile one row block of scores is staged in."""
    return plgpu.SMEM((rows * self.head_dim,), self.dtype)

  def scores(self, rows: int):
    return jax.ShapeDtypeStruct((rows * self.head_dim,), self.dtype)


def _epilogue_body(cfg: AttentionConfig, rows: int, s_ref, p_ref, stage):
  stage[...] = s_ref[...] * cfg.softmax_scale
  shifted = stage[...] - jnp.max(stage[...])
  p_ref[...] = jnp.exp(shifted)


class SoftmaxEpilogue:
  """Builds the epilogue kernel for one config; kernels are cached per row count."""

  def __init__(self, cfg: AttentionConfig):
    self.cfg = cfg
    self._kernels = {}

  def kernel(self, rows: int):
    if rows not in self._kernels:
      body = functools.partial(_epilogue_body, self.cfg, rows)
      self._kernels[rows] = plgpu.kernel(body, out_type=self.cfg.scores(rows),
                                          scratch_types=[self.cfg.staging(rows)])
    return self._kernels[rows]

  def __call__(self, scores):
    rows = scores.shape[0] // self.cfg.head_dim
    return self.kernel(rows)(scores)


def reference(cfg: AttentionConfig, scores):
  scaled = np.asarray(scores) * cfg.softmax_scale
  return np.exp(scaled - scaled.max())


def target():
  cfg = AttentionConfig()
  epilogue = SoftmaxEpilogue(cfg)
  return epilogue, (cfg.scores(cfg.block_q),), "cuda"


if __name__ == "__main__":
  cfg = AttentionConfig()
  epilogue = SoftmaxEpilogue(cfg)
  x = jnp.linspace(-1.0, 1.0, cfg.block_q * cfg.head_dim, dtype=cfg.dtype)
  out = jax.jit(epilogue)(x)
  np.testing.assert_allclose(out, reference(cfg, x), rtol=1e-5)
  print("ok", out.shape)
