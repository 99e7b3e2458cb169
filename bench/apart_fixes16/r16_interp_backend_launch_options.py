"""Gated residual (TPU kernel) with per-backend launch options.

The CPU entry runs the same kernel interpreted; it is what the unit tests and
the notebook use.
"""
# fix-rate: kind=scratch meaning=preserving
import enum
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class Backend(enum.Enum):
  TPU = enum.auto()
  CPU = enum.auto()


LAUNCH_OPTIONS = {
    Backend.TPU: dict(compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",))),
    Backend.CPU: dict(interpret=True),
}

BLOCK_ROWS = 8


def _gated_residual_kernel(x_ref, g_ref, o_ref):
  gate = pl.get_global(pltpu.VMEM((BLOCK_ROWS, x_ref.shape[-1]), jnp.float32))
  gate[...] = jnp.where(g_ref[...] > 0, 1.0, 0.5).astype(jnp.float32)
  o_ref[...] = (x_ref[...] + x_ref[...] * gate[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("backend",))
def gated_residual(x, g, backend=Backend.TPU):
  m, d = x.shape
  spec = pl.BlockSpec((BLOCK_ROWS, d), lambda i: (i, 0))
  return pl.pallas_call(
      _gated_residual_kernel,
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(m // BLOCK_ROWS,),
      in_specs=[spec, spec],
      out_specs=spec,
      **LAUNCH_OPTIONS[backend],
  )(x, g)


_X = np.arange(16 * 128, dtype=np.float32).reshape(16, 128) % 5
_G = np.where(np.arange(16 * 128).reshape(16, 128) % 3 == 0, 1.0, -1.0).astype(np.float32)


def target():
  fn = functools.partial(gated_residual, backend=Backend.CPU)
  return fn, (jnp.asarray(_X), jnp.asarray(_G)), "interpret"


def expected():
  return _X + _X * np.where(_G > 0, 1.0, 0.5).astype(np.float32)
