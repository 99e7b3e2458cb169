"""Two-phase normalize-then-shift kernel with a CLI: `check` runs it on the CPU, `bench` on a TPU.

Phase 2 reads what phase 1 wrote; a REGULAR semaphore fences the phases.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import argparse
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 8, 128


def _norm_shift_kernel(x_ref, o_ref, *, shift: float):
  fence = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 0.5
  pl.semaphore_signal(fence, 1)
  pl.semaphore_wait(fence, 1)
  o_ref[...] = o_ref[...] + shift


def norm_shift(x: jax.Array, *, shift: float, interpret: bool) -> jax.Array:
  return pl.pallas_call(
      functools.partial(_norm_shift_kernel, shift=shift),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="norm_shift")
  sub = parser.add_subparsers(dest="command", required=True)
  check = sub.add_parser("check", help="run once on the CPU interpreter and compare")
  check.add_argument("--shift", type=float, default=1.0)
  check.set_defaults(interpret=True)
  bench = sub.add_parser("bench", help="time the compiled kernel on a TPU")
  bench.add_argument("--shift", type=float, default=1.0)
  bench.add_argument("--iters", type=int, default=100)
  bench.set_defaults(interpret=False)
  return parser


_X = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) / 64.0


def expected():
  return _X * 0.5 + 1.0


def target():
  args = build_parser().parse_args(["check"])
  fn = functools.partial(norm_shift, shift=args.shift, interpret=args.interpret)
  return fn, (jnp.asarray(_X),), "interpret"


def main(argv=None):
  args = build_parser().parse_args(argv)
  run = jax.jit(functools.partial(norm_shift, shift=args.shift, interpret=args.interpret))
  out = jax.block_until_ready(run(jnp.asarray(_X)))
  if args.command == "check":
    np.testing.assert_allclose(np.asarray(out), _X * 0.5 + args.shift)
    print("ok")
  else:
    start = time.perf_counter()
    for _ in range(args.iters):
      out = run(jnp.asarray(_X))
    jax.block_until_ready(out)
    print(f"{(time.perf_counter() - start) / args.iters * 1e6:.1f} us")


if __name__ == "__main__":
  main()
