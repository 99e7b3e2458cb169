"""Front end of the expert weight stream: config lookup and the `pallas_call`."""
# fix-rate: kind=index meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r12_stream_kernel import StreamConfig, stream_scale_kernel
from r12_stream_ref import stream_scale_ref

_KERNEL_SHAPES = {(512, 1024), (256, 2048), (1024, 512)}


def get_default_config(weights) -> StreamConfig | None:
  _, rows, cols = weights.shape
  return StreamConfig(rows, cols) if (rows, cols) in _KERNEL_SHAPES else None


@functools.partial(jax.jit, static_argnames=("force_reference",))
def stream_scale(scales, weights, force_reference: bool = False):
  cfg = get_default_config(weights)
  if cfg is None or force_reference:
    return stream_scale_ref(scales, weights)
  return pl.pallas_call(
      stream_scale_kernel,
      out_shape=jax.ShapeDtypeStruct(weights.shape, weights.dtype),
      grid_spec=pltpu.PrefetchScalarGridSpec(
          num_scalar_prefetch=1,
          grid=(weights.shape[0],),
          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
          out_specs=pl.BlockSpec(memory_space=pl.ANY),
          scratch_shapes=cfg.scratch_shapes(weights.dtype),
      ),
  )(scales, weights)


def target():
  scales = jax.ShapeDtypeStruct((8,), jnp.float32)
  weights = jax.ShapeDtypeStruct((8, 512, 1024), jnp.bfloat16)
  return stream_scale, (scales, weights), "tpu"
