"""Blocked mat-vec with a K-resident accumulator, wrapped in a small immutable kernel object.

`MatVec` holds the launch parameters; `.with_blocks(...)` and `.interpreted()` return modified copies
(`dataclasses.replace`), so tests can write `MatVec().with_blocks(8, 128).interpreted()(w, x)` and run
the same kernel on a CPU-only runner.  The accumulator is float32 and lives across the K steps of
each row block.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# fix-rate: kind=scratch meaning=preserving


def _matvec_kernel(w_ref, x_ref, o_ref, *, k_steps: int):
  kk = pl.program_id(1)
  acc_ref = pl.get_global(pltpu.VMEM(o_ref.shape, jnp.float32))

  @pl.when(kk == 0)
  def _zero():
    acc_ref[...] = jnp.zeros_like(acc_ref)

  acc_ref[...] += jnp.sum(w_ref[...].astype(jnp.float32) * x_ref[...].astype(jnp.float32), axis=1,
                          keepdims=True)

  @pl.when(kk == k_steps - 1)
  def _store():
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


@dataclasses.dataclass(frozen=True)
class MatVec:
  block_m: int = 128
  block_k: int = 512
  interpret: bool = False

  def with_blocks(self, block_m: int, block_k: int) -> "MatVec":
    return dataclasses.replace(self, block_m=block_m, block_k=block_k)

  def interpreted(self) -> "MatVec":
    return dataclasses.replace(self, interpret=True)

  def __call__(self, w: jax.Array, x: jax.Array) -> jax.Array:
    m, k = w.shape
    k_steps = k // self.block_k
    out = pl.pallas_call(
        functools.partial(_matvec_kernel, k_steps=k_steps),
        out_shape=jax.ShapeDtypeStruct((m, 1), w.dtype),
        grid=(m // self.block_m, k_steps),
        in_specs=[
            pl.BlockSpec((self.block_m, self.block_k), lambda i, kk: (i, kk)),
            pl.BlockSpec((1, self.block_k), lambda i, kk: (0, kk)),
        ],
        out_specs=pl.BlockSpec((self.block_m, 1), lambda i, kk: (i, 0)),
        interpret=self.interpret,
    )(w, x.reshape(1, k))
    return out[:, 0]


def _inputs():
  w = (jnp.arange(16 * 256, dtype=jnp.float32) % 7).reshape(16, 256)
  x = jnp.arange(256, dtype=jnp.float32) % 5
  return w, x


def expected():
  w, x = (np.asarray(a) for a in _inputs())
  return w @ x


def target():
  return MatVec().with_blocks(8, 128).interpreted(), _inputs(), "interpret"


if __name__ == "__main__":
  print(target()[0](*_inputs()) - expected())
