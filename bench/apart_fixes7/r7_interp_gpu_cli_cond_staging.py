"""Fake-quantisation round trip (int8 or fp8-like grid) for Mosaic GPU, with a CLI that can interpret it.

`fake_quant(x, scheme)` quantises each row block to a symmetric grid and dequantises it again, the
op quantisation-aware training inserts after a linear layer: `round(x / step) * step`, clamped to
the grid. `scheme` picks the grid at run time through `lax.cond` (a traced flag, so one compiled
kernel serves both); each branch keeps its scaled values in a float32 staging buffer.

    python r7_interp_gpu_cli_cond_staging.py --interpret --scheme int8

`--interpret` runs the kernel with the Mosaic GPU interpreter (`plgpu.InterpretGPUParams`) on the CPU.
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS = 16
COLS = 128
SCHEMES = {"int8": 0, "coarse": 1}
INT8_STEP, INT8_MAX = 0.5, 127.0
COARSE_STEP, COARSE_MAX = 4.0, 7.0


def _fake_quant_body(x_gmem, scheme_gmem, o_gmem):
  rows = pl.ds(lax.axis_index("rows") * ROWS, ROWS)

  def quantise(step: float, qmax: float):
    def branch():
      staging = pl.get_global(plgpu.SMEM((ROWS, COLS), jnp.float32))
      staging[...] = jnp.round(x_gmem[rows, :].astype(jnp.float32) / step)
      staging[...] = jnp.clip(staging[...], -qmax, qmax) * step
      o_gmem[rows, :] = staging[...].astype(o_gmem.dtype)
    return branch

  lax.cond(scheme_gmem[0] == SCHEMES["int8"],
           quantise(INT8_STEP, INT8_MAX), quantise(COARSE_STEP, COARSE_MAX))


def fake_quant(x: jax.Array, scheme: jax.Array, *, interpret: bool = False) -> jax.Array:
  n, cols = x.shape
  if cols != COLS or n % ROWS:
    raise ValueError(f"expected (k*{ROWS}, {COLS}), got {x.shape}")
  return plgpu.kernel(
      _fake_quant_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(n // ROWS,),
      grid_names=("rows",),
      interpret=plgpu.InterpretGPUParams() if interpret else False,
  )(x, scheme)


def _reference(x: np.ndarray, scheme: str) -> np.ndarray:
  step, qmax = (INT8_STEP, INT8_MAX) if scheme == "int8" else (COARSE_STEP, COARSE_MAX)
  return np.clip(np.round(x / step), -qmax, qmax) * step


_X = (np.arange(4 * ROWS * COLS, dtype=np.float32).reshape(4 * ROWS, COLS) % 37 - 18) * 0.75


def target():
  fn = functools.partial(fake_quant, interpret=True)
  return fn, (jnp.asarray(_X), jnp.array([SCHEMES["coarse"]], jnp.int32)), "interpret"


def expected():
  return _reference(_X, "coarse")


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--scheme", choices=sorted(SCHEMES), default="int8")
  parser.add_argument("--interpret", action="store_true", help="run on the Pallas interpreter")
  args = parser.parse_args(argv)
  run = jax.jit(functools.partial(fake_quant, interpret=args.interpret))
  got = run(jnp.asarray(_X), jnp.array([SCHEMES[args.scheme]], jnp.int32))
  np.testing.assert_array_equal(np.asarray(got), _reference(_X, args.scheme))
  print(f"{args.scheme}: ok, {got.shape}")


if __name__ == "__main__":
  main()
