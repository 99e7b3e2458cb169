"""Row-block RMSNorm for the decoder's pre-attention norm (Mosaic GPU).

Launch arguments are assembled once per model shape by `launch_kwargs` and
splatted into `plgpu.kernel`, the way the serving stack's op table does it.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class NormShape(NamedTuple):
  rows: int
  width: int
  eps: float = 1e-6


MODEL_SHAPES: dict[str, NormShape] = {
    "gemma-2b": NormShape(rows=4, width=256),
    "llama-7b": NormShape(rows=8, width=512, eps=1e-5),
}


def launch_kwargs(shape: NormShape, dtype) -> dict[str, Any]:
  return {
      "out_type": jax.ShapeDtypeStruct((shape.rows * shape.width,), dtype),
      "grid": (shape.rows,),
      "grid_names": ("rows",),
  }


def _rms_body(x_ref, w_ref, o_ref, *, shape: NormShape):
  row = jax.lax.axis_index("rows")
  span = pl.ds(row * shape.width, shape.width)
  widened = pl.get_global(plgpu.SMEM((shape.width,), jnp.float32))
  widened[...] = x_ref[span].astype(jnp.float32)
  sq = widened[...] * widened[...]
  mean_sq = jnp.sum(sq) / shape.width
  scale = jax.lax.rsqrt(mean_sq + shape.eps)
  o_ref[span] = (widened[...] * scale * w_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


@functools.lru_cache(maxsize=None)
def _compiled_norm(model: str, dtype_name: str):
  shape = MODEL_SHAPES[model]
  body = functools.partial(_rms_body, shape=shape)
  return plgpu.kernel(body, **launch_kwargs(shape, jnp.dtype(dtype_name)))


@functools.partial(jax.jit, static_argnames=("model",))
def rms_norm(x: jax.Array, weight: jax.Array, *, model: str) -> jax.Array:
  return _compiled_norm(model, x.dtype.name)(x, weight)


def target():
  shape = MODEL_SHAPES["gemma-2b"]
  args = (
      jax.ShapeDtypeStruct((shape.rows * shape.width,), jnp.bfloat16),
      jax.ShapeDtypeStruct((shape.width,), jnp.bfloat16),
  )
  return functools.partial(rms_norm, model="gemma-2b"), args, "cuda"


if __name__ == "__main__":
  s = MODEL_SHAPES["llama-7b"]
  x = jnp.ones((s.rows * s.width,), jnp.bfloat16)
  print(rms_norm(x, jnp.ones((s.width,), jnp.bfloat16), model="llama-7b")[:4])
