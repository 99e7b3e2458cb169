"""The TPU path: the helper's type as scratch of a pallas_call."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from buffers import staging_type


def _tpu_body(x_ref, o_ref, stage):
    stage[...] = x_ref[...]
    o_ref[...] = stage[...] + 1.0


def scale_tpu(x):
    return pl.pallas_call(_tpu_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          scratch_shapes=[staging_type(x.shape[1], x.dtype, backend="tpu")])(x)
