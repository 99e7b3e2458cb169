"""LayerNorm over row blocks, with the norm hyper-parameters behind an abstract config class.

Model code subclasses `NormConfig` (the ABC says what a norm needs); the kernel only reads the
properties. The tests and the CPU CI run the kernel interpreted.
"""
# fix-rate: kind=scratch meaning=preserving

import abc

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class NormConfig(abc.ABC):
  @property
  @abc.abstractmethod
  def eps(self) -> float: ...

  @property
  @abc.abstractmethod
  def block_rows(self) -> int: ...

  def grid(self, rows: int):
    return (rows // self.block_rows,)


class DecoderNormConfig(NormConfig):
  eps = 1e-5
  block_rows = 8


def _make_layernorm_body(cfg: NormConfig):
  def body(x_ref, g_ref, b_ref, o_ref):
    centred = pl.get_global(pltpu.VMEM(x_ref.shape, jnp.float32))
    x = x_ref[...].astype(jnp.float32)
    centred[...] = x - jnp.mean(x, axis=1, keepdims=True)
    var = jnp.mean(centred[...] * centred[...], axis=1, keepdims=True)
    y = centred[...] * jax.lax.rsqrt(var + cfg.eps)
    o_ref[...] = (y * g_ref[...] + b_ref[...]).astype(o_ref.dtype)

  return body


def layernorm(x, gamma, beta, cfg: NormConfig = DecoderNormConfig(), *, interpret=True):
  rows, hidden = x.shape
  row_block = pl.BlockSpec((cfg.block_rows, hidden), lambda i: (i, 0))
  param_block = pl.BlockSpec((1, hidden), lambda i: (0, 0))
  return pl.pallas_call(
      _make_layernorm_body(cfg),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=cfg.grid(rows),
      in_specs=[row_block, param_block, param_block],
      out_specs=row_block,
      interpret=interpret,
  )(x, gamma, beta)


def _inputs():
  x = jnp.arange(32 * 128, dtype=jnp.float32).reshape(32, 128) % 7.0
  gamma = jnp.full((1, 128), 2.0, jnp.float32)
  beta = jnp.full((1, 128), 0.5, jnp.float32)
  return x, gamma, beta


@jax.jit
def reference(x, gamma, beta, eps=DecoderNormConfig.eps):
  centred = x - jnp.mean(x, axis=1, keepdims=True)
  var = jnp.mean(centred * centred, axis=1, keepdims=True)
  return centred * jax.lax.rsqrt(var + eps) * gamma + beta


def expected():
  return np.asarray(reference(*_inputs()))


def target():
  return layernorm, _inputs(), "interpret"


if __name__ == "__main__":
  print(np.abs(np.asarray(layernorm(*_inputs())) - expected()).max())
