"""Command-line driver for the fused residual-add kernel (Mosaic GPU).

``python r8_interp_cli_gpu_residual_flag.py --interpret`` runs the kernel in the
Pallas interpreter, which is how the kernel is exercised in CI (CPU runners);
without the flag it needs an H100/H200. The kernel adds the residual into the
hidden state and publishes a ``written`` flag that the debugging build checks
before returning.
"""

# fix-rate: kind=scratch meaning=preserving

import argparse
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

ROWS, WIDTH = 64, 128


def _residual_body(h_gmem, r_gmem, o_gmem):
  written = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_gmem[...] = h_gmem[...] + r_gmem[...]
  pl.semaphore_signal(written, 1)
  pl.semaphore_wait(written, 1)


def residual_add(hidden, residual, *, interpret: bool = False):
  return plgpu.kernel(
      _residual_body,
      out_type=jax.ShapeDtypeStruct(hidden.shape, hidden.dtype),
      interpret=interpret,
  )(hidden, residual)


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--interpret", action="store_true", help="run in the Pallas interpreter")
  parser.add_argument("--seed", type=int, default=0)
  return parser.parse_args(argv)


def _inputs(seed: int):
  hidden = jnp.arange(ROWS * WIDTH, dtype=jnp.float32).reshape(ROWS, WIDTH) + seed
  residual = jnp.ones((ROWS, WIDTH), jnp.float32)
  return hidden, residual


def target():
  args = parse_args(["--interpret"])
  fn = functools.partial(residual_add, interpret=args.interpret)
  return fn, _inputs(args.seed), "interpret"


def expected():
  hidden = np.arange(ROWS * WIDTH, dtype=np.float32).reshape(ROWS, WIDTH)
  return hidden + 1.0


def main(argv=None) -> int:
  args = parse_args(argv)
  hidden, residual = _inputs(args.seed)
  out = jax.jit(functools.partial(residual_add, interpret=args.interpret))(hidden, residual)
  ok = bool(jnp.all(out == hidden + residual))
  print("ok" if ok else "MISMATCH")
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
