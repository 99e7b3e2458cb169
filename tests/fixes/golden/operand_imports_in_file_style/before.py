"""No jax.numpy import, `from functools import partial`, mosaic_gpu under another alias."""
from functools import partial

from jax import ShapeDtypeStruct
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as gpu

OUT = ShapeDtypeStruct((8, 128), "bfloat16")


def body(x_ref, o_ref):
  weights = pl.get_global(gpu.GMEM((8, 128), "bfloat16"))
  o_ref[...] = x_ref[...] * weights[...]


def target():
  return gpu.kernel(body, out_type=OUT), (OUT,), "cuda"
