"""Token-shift mixing (RWKV style) for TPU, tested interpreted with `pltpu.InterpretParams`.

`out = mu * x + (1 - mu) * x_prev`, both inputs widened to f32 first by a helper nested in
the body; `x_prev` is `x` shifted down one row by the caller.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, LANES = 8, 128


@dataclasses.dataclass(frozen=True)
class MixSettings:
  mu: float = 0.75
  interpret: object = dataclasses.field(default_factory=lambda: pltpu.InterpretParams())


def token_shift_mix(x, x_prev, settings: MixSettings):
  def body(x_ref, prev_ref, o_ref):
    def as_f32(src):
      dst = pl.get_global(pltpu.VMEM((ROWS, LANES), jnp.float32))
      dst[...] = src[...].astype(jnp.float32)
      return dst

    cur = as_f32(x_ref)
    prev = as_f32(prev_ref)
    o_ref[...] = settings.mu * cur[...] + (1.0 - settings.mu) * prev[...]

  spec = pl.BlockSpec((ROWS, LANES), lambda i: (i, 0))
  return pl.pallas_call(
      body,
      out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
      grid=(x.shape[0] // ROWS,),
      in_specs=[spec, spec],
      out_specs=spec,
      interpret=settings.interpret,
  )(x, x_prev)


def mix_layer(x):
  prev = jnp.concatenate([jnp.zeros_like(x[:1]), x[:-1]], axis=0)
  return token_shift_mix(x, prev, MixSettings())


def _data():
  return np.arange(16 * LANES, dtype=np.float32).reshape(16, LANES) % 64


def target():
  return mix_layer, (jnp.asarray(_data(), jnp.bfloat16),), "interpret"


def expected():
  x = _data()
  prev = np.concatenate([np.zeros_like(x[:1]), x[:-1]], axis=0)
  return np.float32(0.75) * x + np.float32(0.25) * prev
