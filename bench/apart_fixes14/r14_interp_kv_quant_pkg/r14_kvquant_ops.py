"""Front end of the KV-cache quantizer: config (with the interpreter switch) and launch."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from r14_kvquant_kernel import KVQuantKernel


@dataclasses.dataclass(frozen=True)
class KVQuantConfig:
  block_rows: int = 8
  interpret: bool = False

  def interpret_params(self):
    return pltpu.InterpretParams(dma_execution_mode="eager") if self.interpret else False


@functools.partial(jax.jit, static_argnames=("config",))
def quantize_kv(kv: jax.Array, config: KVQuantConfig = KVQuantConfig()):
  rows, head_dim = kv.shape
  body = KVQuantKernel(config.block_rows, head_dim)
  return pl.pallas_call(
      body,
      out_shape=[
          jax.ShapeDtypeStruct((rows, head_dim), jnp.int8),
          jax.ShapeDtypeStruct((rows, 128), jnp.float32),
      ],
      grid=(rows // config.block_rows,),
      in_specs=[pl.BlockSpec((config.block_rows, head_dim), lambda i: (i, 0))],
      out_specs=[
          pl.BlockSpec((config.block_rows, head_dim), lambda i: (i, 0)),
          pl.BlockSpec((config.block_rows, 128), lambda i: (i, 0)),
      ],
      interpret=config.interpret_params(),
  )(kv)
