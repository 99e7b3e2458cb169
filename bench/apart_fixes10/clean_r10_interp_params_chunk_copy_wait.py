"""Chunked HBM-to-VMEM copy with a scale, checked on the CPU with the TPU interpreter's eager DMAs.

`ChunkedScale` keeps its chunk size and the interpreter settings; tests build it with `for_tests()`.
"""
# fix-rate: clean

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ChunkedScale:
  chunk_rows: int = 8
  scale: float = 3.0
  interpret: object = False

  @classmethod
  def for_tests(cls) -> "ChunkedScale":
    return cls(interpret=pltpu.InterpretParams(dma_execution_mode="eager"))

  def kernel(self, x_hbm, o_ref, chunk, sem):
    num_chunks = x_hbm.shape[0] // self.chunk_rows

    def body(c, carry):
      rows = pl.ds(c * self.chunk_rows, self.chunk_rows)
      copy = pltpu.make_async_copy(x_hbm.at[rows], chunk, sem)
      copy.start()
      copy.wait()
      o_ref[rows, :] = chunk[...] * self.scale
      return carry

    jax.lax.fori_loop(0, num_chunks, body, 0)

  def __call__(self, x: jax.Array) -> jax.Array:
    _, cols = x.shape
    return pl.pallas_call(
        self.kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((self.chunk_rows, cols), x.dtype), pltpu.SemaphoreType.DMA],
        interpret=self.interpret,
    )(x)


def _input() -> np.ndarray:
  return np.arange(32 * 128, dtype=np.float32).reshape(32, 128) % 7.0


def target():
  return jax.jit(ChunkedScale.for_tests()), (jnp.asarray(_input()),), "interpret"


def expected():
  return _input() * 3.0


if __name__ == "__main__":
  out = jax.jit(ChunkedScale.for_tests())(jnp.asarray(_input()))
  np.testing.assert_allclose(out, expected())
  print("ok", functools.reduce(lambda a, b: a * b, out.shape))
