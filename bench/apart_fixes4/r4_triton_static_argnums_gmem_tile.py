"""Fused bias + GELU + scale for the MLP up-projection output (Triton path of the GPU backend).

Launched through a jitted wrapper whose block size and approximation flag are static. The GELU result
of a block is parked in a global tile before the scale is applied.
"""
# fix-rate: kind=value meaning=preserving

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton

_TRITON_PARAMS = {
    64: pltriton.CompilerParams(num_warps=2, num_stages=1),
    128: pltriton.CompilerParams(num_warps=4, num_stages=1),
    256: pltriton.CompilerParams(num_warps=8, num_stages=1),
}


def _gelu(x, approximate: bool):
  if approximate:
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
  return 0.5 * x * (1.0 + jax.lax.erf(x / math.sqrt(2.0)))


def _bias_gelu_scale_kernel(x_ref, b_ref, s_ref, o_ref, *, approximate: bool):
  block_rows, cols = x_ref.shape
  activated = pl.get_global(plgpu.GMEM((block_rows, cols), jnp.float32))
  h = x_ref[...].astype(jnp.float32) + b_ref[...].astype(jnp.float32)
  activated[...] = _gelu(h, approximate)
  o_ref[...] = (activated[...] * s_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnums=(3, 4))
def bias_gelu_scale(x, bias, scale, block_rows: int = 128, approximate: bool = True):
  rows, cols = x.shape
  kernel = functools.partial(_bias_gelu_scale_kernel, approximate=approximate)
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // block_rows,),
      in_specs=[
          pl.BlockSpec((block_rows, cols), lambda i: (i, 0)),
          pl.BlockSpec((1, cols), lambda i: (0, 0)),
          pl.BlockSpec((1, cols), lambda i: (0, 0)),
      ],
      out_specs=pl.BlockSpec((block_rows, cols), lambda i: (i, 0)),
      compiler_params=_TRITON_PARAMS[block_rows],
  )(x, bias, scale)


def reference(x, bias, scale, approximate=True):
  h = x.astype(jnp.float32) + bias.astype(jnp.float32)
  return (_gelu(h, approximate) * scale.astype(jnp.float32)).astype(x.dtype)


def target():
  x = jax.ShapeDtypeStruct((512, 256), jnp.float16)
  vec = jax.ShapeDtypeStruct((1, 256), jnp.float16)
  return (lambda a, b, s: bias_gelu_scale(a, b, s, 128, True)), (x, vec, vec), "triton"


if __name__ == "__main__":
  keys = jax.random.split(jax.random.key(0), 3)
  x = jax.random.normal(keys[0], (512, 256), jnp.float16)
  b = jax.random.normal(keys[1], (1, 256), jnp.float16)
  s = jax.random.normal(keys[2], (1, 256), jnp.float16)
  for block_rows in _TRITON_PARAMS:
    got = bias_gelu_scale(x, b, s, block_rows, True)
    print(block_rows, float(jnp.max(jnp.abs(got.astype(jnp.float32) - reference(x, b, s)))))
