"""A command-line tool that runs a prefix-max kernel on the GPU or, with `--backend cpu`, interpreted on the CPU.

`--backend cpu` turns on interpret mode (`interpret = args.backend == "cpu"`), which is how the
author debugs on a laptop; the kernel's ordering semaphore was fetched with `pl.get_global`, which no
interpreter supports.
"""
# fix-rate: kind=scratch meaning=preserving

import argparse
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 128


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", choices=("cpu", "gpu"), default="gpu")
  parser.add_argument("--length", type=int, default=N)
  return parser.parse_args(argv)


def clamp_body(x_ref, lo_ref, y_ref):
  order = pl.get_global(plgpu.SemaphoreType.REGULAR)
  y_ref[...] = jnp.maximum(x_ref[...], lo_ref[...])
  pl.semaphore_signal(order)
  pl.semaphore_wait(order)


def build(args):
  interpret = args.backend == "cpu"
  out = jax.ShapeDtypeStruct((args.length,), jnp.float32)
  return plgpu.kernel(clamp_body, out_type=out, interpret=interpret)


def inputs(length):
  x = jnp.linspace(-1.0, 1.0, length, dtype=jnp.float32)
  lo = jnp.zeros((length,), jnp.float32)
  return x, lo


def expected():
  x, lo = inputs(N)
  return np.maximum(np.asarray(x), np.asarray(lo))


def target():
  args = parse_args(["--backend", "cpu"])
  return build(args), inputs(args.length), "interpret"


def main(argv):
  args = parse_args(argv)
  out = jax.jit(build(args))(*inputs(args.length))
  print(np.asarray(out)[:8])
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
