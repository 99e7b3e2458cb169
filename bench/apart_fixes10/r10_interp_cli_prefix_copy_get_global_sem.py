"""Copies the first rows of an HBM matrix into VMEM and adds a bias: a tiny CLI for checking it.

`--interpret` runs the kernel with the TPU interpreter (the default on a machine without a TPU).
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

PREFIX_ROWS = 8


def _prefix_bias_kernel(bias, x_hbm, o_ref, staging):
  copy_done = pl.get_global(pltpu.SemaphoreType.DMA)
  copy = pltpu.make_async_copy(x_hbm.at[pl.ds(0, PREFIX_ROWS)], staging, copy_done)
  copy.start()
  copy.wait()
  o_ref[...] = staging[...] + bias


def build(bias: float, interpret: bool):
  def run(x: jax.Array) -> jax.Array:
    _, cols = x.shape
    return pl.pallas_call(
        functools.partial(_prefix_bias_kernel, bias),
        out_shape=jax.ShapeDtypeStruct((PREFIX_ROWS, cols), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((PREFIX_ROWS, cols), x.dtype)],
        interpret=pltpu.InterpretParams() if interpret else False,
    )(x)

  return jax.jit(run)


def _parse(argv=None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--rows", type=int, default=32)
  parser.add_argument("--cols", type=int, default=128)
  parser.add_argument("--bias", type=float, default=0.5)
  parser.add_argument("--interpret", action="store_true", default=jax.default_backend() != "tpu")
  return parser.parse_args(argv)


def _input(rows: int = 32, cols: int = 128) -> np.ndarray:
  return np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 100.0


def target():
  args = _parse(["--interpret"])
  return build(args.bias, args.interpret), (jnp.asarray(_input(args.rows, args.cols)),), "interpret"


def expected():
  return _input()[:PREFIX_ROWS] + 0.5


if __name__ == "__main__":
  args = _parse()
  out = build(args.bias, args.interpret)(jnp.asarray(_input(args.rows, args.cols)))
  print(np.asarray(out)[:2, :4])
