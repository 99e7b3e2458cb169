"""Blocked column sums, with a command line to check the kernel on a laptop.

    python r16_interp_main_argv_colsum.py --interpret --rows 64 --cols 256
"""
# fix-rate: clean
import argparse
import functools
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

LANES = 128


def _colsum_kernel(x_ref, o_ref, acc):
  r = pl.program_id(1)

  @pl.when(r == 0)
  def _():
    acc[...] = jnp.zeros_like(acc)

  acc[...] += jnp.sum(x_ref[...].astype(jnp.float32), axis=0, keepdims=True)

  @pl.when(r == pl.num_programs(1) - 1)
  def _():
    o_ref[...] = acc[...]


def parse_args(argv):
  p = argparse.ArgumentParser()
  p.add_argument("--interpret", action="store_true", help="run on the CPU interpreter")
  p.add_argument("--rows", type=int, default=4096)
  p.add_argument("--cols", type=int, default=1024)
  p.add_argument("--block-rows", type=int, default=256)
  return p.parse_args(argv)


def make_launcher(args):
  def launch(x):
    m, n = x.shape
    return pl.pallas_call(
        _colsum_kernel,
        out_shape=jax.ShapeDtypeStruct((1, n), jnp.float32),
        grid=(n // LANES, m // args.block_rows),
        in_specs=[pl.BlockSpec((args.block_rows, LANES), lambda c, r: (r, c))],
        out_specs=pl.BlockSpec((1, LANES), lambda c, r: (0, c)),
        scratch_shapes=[pltpu.VMEM((1, LANES), jnp.float32)],
        interpret=args.interpret,
    )(x)
  return jax.jit(launch)


def main(argv):
  args = parse_args(argv)
  x = np.random.default_rng(0).normal(size=(args.rows, args.cols)).astype(np.float32)
  got = make_launcher(args)(jnp.asarray(x))
  np.testing.assert_allclose(np.asarray(got), x.sum(0, keepdims=True), rtol=1e-4, atol=1e-3)
  print("ok")
  return 0


_ARGV = ["--interpret", "--rows", "32", "--cols", "256", "--block-rows", "8"]
_X = (np.arange(32 * 256, dtype=np.float32).reshape(32, 256) % 7) - 3.0


def target():
  return make_launcher(parse_args(_ARGV)), (jnp.asarray(_X),), "interpret"


def expected():
  return _X.sum(0, keepdims=True)


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
