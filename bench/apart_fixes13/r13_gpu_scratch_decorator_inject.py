"""Kernel bodies that declare their scratch with a decorator, for Mosaic GPU.

`@with_scratch(factory)` lets a body say what staging it wants next to its definition;
the decorator allocates it and passes it as the last argument.
"""

# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

BLOCK = 128


def with_scratch(factory: Callable[[], object]):
  def decorate(body):
    @functools.wraps(body)
    def wrapped(*refs):
      return body(*refs, pl.get_global(factory()))
    return wrapped
  return decorate


@with_scratch(lambda: plgpu.SMEM((BLOCK,), jnp.float32))
def _gelu_body(x_ref, o_ref, stage):
  i = lax.axis_index("blocks")
  sl = pl.ds(i * BLOCK, BLOCK)
  stage[...] = x_ref[sl].astype(jnp.float32)
  v = stage[...]
  o_ref[sl] = (0.5 * v * (1.0 + jnp.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))).astype(o_ref.dtype)


@dataclasses.dataclass(frozen=True)
class ActivationOp:
  body: Callable
  name: str

  def __call__(self, x):
    (n,) = x.shape
    return plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct((n,), x.dtype),
        grid=(n // BLOCK,),
        grid_names=("blocks",),
    )(x)


GELU = ActivationOp(_gelu_body, "gelu_tanh")


def target():
  return jax.jit(GELU), (jax.ShapeDtypeStruct((4096,), jnp.bfloat16),), "cuda"


if __name__ == "__main__":
  print(jax.jit(GELU)(jnp.ones((4096,), jnp.bfloat16))[:4])
