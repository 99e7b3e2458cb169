"""Generator of streamed-copy kernel variants for the HBM bandwidth sweep in the paper.

`kernel_variants()` yields `(name, fn)` pairs, one per chunk count; each variant streams
its input from HBM into VMEM chunk by chunk with manual DMAs and adds a bias on the way
out. The sweep driver jits and times every variant.
"""
# fix-rate: kind=scratch meaning=preserving

import functools
from typing import Callable, Iterator, Tuple

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 512, 128


def _streamed_bias_body(x_hbm, b_ref, o_ref, buf, *, num_chunks):
  chunk = ROWS // num_chunks
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  for c in range(num_chunks):
    rows = pl.ds(c * chunk, chunk)
    copy = pltpu.make_async_copy(x_hbm.at[rows], buf.at[rows], sem)
    copy.start()
    copy.wait()
  o_ref[...] = buf[...] + b_ref[...]


def _make_variant(num_chunks: int) -> Callable:
  return pl.pallas_call(
      functools.partial(_streamed_bias_body, num_chunks=num_chunks),
      out_shape=jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
      in_specs=[
          pl.BlockSpec(memory_space=pl.ANY),
          pl.BlockSpec(memory_space=pltpu.VMEM),
      ],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.VMEM((ROWS, COLS), jnp.float32)],
  )


def kernel_variants(chunk_counts=(1, 2, 4)) -> Iterator[Tuple[str, Callable]]:
  for n in chunk_counts:
    yield f"streamed_bias_c{n}", _make_variant(n)


def run_sweep(x, b):
  return {name: fn(x, b) for name, fn in kernel_variants()}


def target():
  spec = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
  return run_sweep, (spec, spec), "tpu"


if __name__ == "__main__":
  x = jnp.ones((ROWS, COLS))
  for name, out in jax.jit(run_sweep)(x, x).items():
    print(name, out[0, 0])
