"""Running (inclusive) column sums over row blocks on TPU: out block i = sum of rows of blocks 0..i.

Used to build cumulative routing counts. The running total is carried in VMEM across the sequential
grid. Off TPU (laptops, CPU CI) the kernel runs under the TPU interpreter; the choice is one `match`.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK_ROWS = 8


def interpret_mode(backend: str):
  match backend:
    case "tpu":
      return False
    case "cpu" | "gpu" | "cuda" | "rocm":
      return pltpu.InterpretParams()
    case other:
      raise ValueError(f"no Pallas path for backend {other!r}")


def _running_colsum_body(x_ref, o_ref):
  step = pl.program_id(0)
  total = pl.get_global(pltpu.VMEM((1, x_ref.shape[1]), jnp.float32))

  @pl.when(step == 0)
  def _reset():
    total[...] = jnp.zeros_like(total)

  total[...] += jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)
  o_ref[...] = total[...].astype(o_ref.dtype)


def running_colsum(x):
  rows, cols = x.shape
  return pl.pallas_call(
      _running_colsum_body,
      out_shape=jax.ShapeDtypeStruct((rows // BLOCK_ROWS, cols), jnp.float32),
      grid=(rows // BLOCK_ROWS,),
      in_specs=[pl.BlockSpec((BLOCK_ROWS, cols), lambda i: (i, 0))],
      out_specs=pl.BlockSpec((1, cols), lambda i: (i, 0)),
      compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
      interpret=interpret_mode(jax.default_backend()),
  )(x)


def _inputs():
  return (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 5.0,)


def expected():
  (x,) = _inputs()
  per_block = np.asarray(x).reshape(-1, BLOCK_ROWS, 128).sum(axis=1)
  return np.cumsum(per_block, axis=0)


def target():
  return running_colsum, _inputs(), "interpret"


if __name__ == "__main__":
  print(np.abs(np.asarray(running_colsum(*_inputs())) - expected()).max())
