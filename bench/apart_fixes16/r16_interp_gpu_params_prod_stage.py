"""Swish on the Mosaic GPU interpreter, for the CPU CI job.

Shapes and dtypes come from the tuning table as tuples and NumPy dtype strings
(the table is JSON-serialised for the autotuner); the kernel multiplies the
tiling tuple out with `math.prod`.
"""
# fix-rate: kind=scratch meaning=preserving
import functools
import math

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TUNING = {
    "cpu-ci": {"tile": [2, 4, 128], "stage_dtype": "float32", "interpret": True},
    "h100": {"tile": [4, 16, 128], "stage_dtype": "float32", "interpret": False},
}


def _swish_body(entry, x_ref, o_ref):
  rows = math.prod(entry["tile"][:-1])
  stage = pl.get_global(plgpu.SMEM((rows, entry["tile"][-1]), np.dtype(entry["stage_dtype"])))
  stage[...] = x_ref[...].astype(stage.dtype)
  o_ref[...] = (stage[...] * jax.nn.sigmoid(stage[...])).astype(o_ref.dtype)


def swish(x, device="h100"):
  entry = TUNING[device]
  interpret = plgpu.InterpretGPUParams() if entry["interpret"] else False
  return plgpu.kernel(
      functools.partial(_swish_body, entry),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


_X = np.zeros((8, 128), np.float32)
_X[::2] = 4.0


def target():
  return jax.jit(functools.partial(swish, device="cpu-ci")), (jnp.asarray(_X),), "interpret"


def expected():
  x = jnp.asarray(_X)
  return np.asarray(jax.jit(lambda v: v * jax.nn.sigmoid(v))(x))
