"""A small command-line driver: --interpret runs the scaling kernel on the CPU."""
# fix-rate: kind=scratch meaning=preserving

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

LENGTH = 16


def offsets_body(x_ref, o_ref):
  ticket = pl.get_global(plgpu.SemaphoreType.REGULAR)
  pl.semaphore_signal(ticket)
  o_ref[...] = x_ref[...] * 10.0
  pl.semaphore_wait(ticket)


def parse(argv):
  parser = argparse.ArgumentParser()
  parser.add_argument("--interpret", action="store_true")
  return parser.parse_args(argv)


def build(flags):
  out = jax.ShapeDtypeStruct((LENGTH,), jnp.float32)
  return plgpu.kernel(offsets_body, out_type=out, interpret=flags.interpret)


def main(argv=None):
  flags = parse(argv)
  print(build(flags)(jnp.ones((LENGTH,), jnp.float32)))


def expected():
  return np.arange(LENGTH, dtype=np.float32) * 10.0


def target():
  flags = parse(["--interpret"])
  return build(flags), (jnp.arange(LENGTH, dtype=jnp.float32),), "interpret"


if __name__ == "__main__":
  main()
