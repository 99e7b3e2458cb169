"""TPU RMS norm: a row block per grid step, the f32 copy kept in VMEM."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from ._shared import NormConfig, normalize as _normalize


def _body(cfg, x_ref, w_ref, o_ref, x32):
  x32[...] = x_ref[...].astype(jnp.float32)
  sq_mean = jnp.mean(x32[...] * x32[...], axis=-1, keepdims=True)
  o_ref[...] = _normalize(x32[...], sq_mean, w_ref[...], cfg.eps).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("cfg",))
def rms_norm(x, w, cfg: NormConfig = NormConfig()):
  m, d = x.shape
  return pl.pallas_call(
      functools.partial(_body, cfg),
      out_shape=jax.ShapeDtypeStruct(x.shape, jnp.dtype(cfg.dtype)),
      grid=(m // cfg.block_rows,),
      in_specs=[pl.BlockSpec((cfg.block_rows, d), lambda i: (i, 0)),
                pl.BlockSpec((1, d), lambda i: (0, 0))],
      out_specs=pl.BlockSpec((cfg.block_rows, d), lambda i: (i, 0)),
      scratch_shapes=[pltpu.VMEM((cfg.block_rows, d), jnp.float32)],
  )(x, w)
