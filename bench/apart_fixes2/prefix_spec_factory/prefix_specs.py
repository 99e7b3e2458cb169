"""Shapes of the prefix-norm kernels, built from a config by the functions here."""

import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class NormShapes:
  width: int = 256
  dtype: object = jnp.float32


def squares_spec(shapes: NormShapes):
  """The buffer the squared inputs are kept in while the norm is formed."""
  return jax.ShapeDtypeStruct((shapes.width,), shapes.dtype)


def vector_spec(shapes: NormShapes):
  return jax.ShapeDtypeStruct((shapes.width,), shapes.dtype)
