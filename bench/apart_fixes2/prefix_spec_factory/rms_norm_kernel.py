"""RMS normalisation of one vector; the squares buffer's type comes from a spec factory in prefix_specs.py."""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from prefix_specs import NormShapes, squares_spec, vector_spec

EPS = 1e-6


def rms_norm_body(shapes: NormShapes, x_ref, w_ref, y_ref):
  squares = pl.get_global(squares_spec(shapes))
  squares[...] = x_ref[...] * x_ref[...]
  inv = jax.lax.rsqrt(jnp.mean(squares[...]) + EPS)
  y_ref[...] = x_ref[...] * inv * w_ref[...]


def make_rms_norm(shapes: NormShapes):
  return plgpu.kernel(functools.partial(rms_norm_body, shapes), out_type=vector_spec(shapes))


def reference(x, w):
  x = np.asarray(x)
  return x / np.sqrt(np.mean(x * x) + EPS) * np.asarray(w)


def target():
  shapes = NormShapes()
  return make_rms_norm(shapes), (vector_spec(shapes), vector_spec(shapes)), "cuda"


if __name__ == "__main__":
  shapes = NormShapes()
  x = jnp.linspace(-1.0, 1.0, shapes.width, dtype=shapes.dtype)
  w = jnp.full((shapes.width,), 0.5, shapes.dtype)
  np.testing.assert_allclose(jax.jit(make_rms_norm(shapes))(x, w), reference(x, w), rtol=1e-5)
  print("rms norm ok")
