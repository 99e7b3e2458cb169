"""Interpret-mode tests of the fused LayerNorm kernel, parametrized over shapes and block sizes.

Runs on CPU CI with `interpret=True`; the kernel centres each row in a VMEM buffer before
the variance. Without pytest installed the module still imports and its cases can be driven
from `__main__`.
"""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

try:
  import pytest
except ImportError:  # minimal stand-in so the cases stay importable as a script
  class _Mark:
    @staticmethod
    def parametrize(names, values):
      def wrap(fn):
        fn.parametrize = (names, list(values))
        return fn
      return wrap

  class pytest:  # noqa: N801
    mark = _Mark()


EPS = 1e-5


def _layernorm_body(x_ref, g_ref, o_ref, *, block_rows):
  x = x_ref[...]
  centered = pl.get_global(pltpu.VMEM((block_rows, x.shape[1]), jnp.float32))
  centered[...] = x - jnp.mean(x, axis=1, keepdims=True)
  var = jnp.mean(centered[...] * centered[...], axis=1, keepdims=True)
  o_ref[...] = centered[...] / jnp.sqrt(var + EPS) * g_ref[...]


def layernorm(x, gamma, *, block_rows=8, interpret=True):
  rows, width = x.shape
  spec = pl.BlockSpec((block_rows, width), lambda i: (i, 0))
  return pl.pallas_call(
      functools.partial(_layernorm_body, block_rows=block_rows),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(rows // block_rows,),
      in_specs=[spec, pl.BlockSpec((1, width), lambda i: (0, 0))],
      out_specs=spec,
      interpret=interpret,
  )(x, gamma)


def layernorm_reference(x, gamma):
  centered = x - jnp.mean(x, axis=1, keepdims=True)
  var = jnp.mean(centered * centered, axis=1, keepdims=True)
  return centered / jnp.sqrt(var + EPS) * gamma


def _inputs(rows, width):
  # small integers keep every partial sum exact, so interpret mode matches bit for bit
  kx, kg = jax.random.split(jax.random.key(rows * width))
  x = jax.random.randint(kx, (rows, width), -8, 8).astype(jnp.float32)
  g = jax.random.randint(kg, (1, width), 1, 4).astype(jnp.float32)
  return x, g


@pytest.mark.parametrize(
    "rows,width,block_rows", [(16, 128, 8), (32, 128, 16), (64, 256, 8)]
)
def test_layernorm_matches_reference(rows, width, block_rows):
  x, g = _inputs(rows, width)
  got = layernorm(x, g, block_rows=block_rows)
  np.testing.assert_allclose(got, layernorm_reference(x, g), rtol=1e-5, atol=1e-5)


def target():
  x, g = _inputs(32, 128)
  return functools.partial(layernorm, block_rows=16), (x, g), "interpret"


def expected():
  return jax.jit(layernorm_reference)(*_inputs(32, 128))


if __name__ == "__main__":
  for args in test_layernorm_matches_reference.parametrize[1]:
    test_layernorm_matches_reference(*args)
  print("ok")
