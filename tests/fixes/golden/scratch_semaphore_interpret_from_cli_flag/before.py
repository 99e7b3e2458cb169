"""A command-line flag (--interpret) decides whether the kernel is interpreted: the runs that pass it want the
CPU, so the semaphore becomes scratch (which both runs take) rather than the kernel compiled."""
import argparse

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

LENGTH = 16


def body(x_ref, o_ref):
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
  return plgpu.kernel(body, out_type=out, interpret=flags.interpret)


def target():
  return build(parse(["--interpret"])), (jnp.ones((LENGTH,), jnp.float32),), "interpret"


def expected():
  return jnp.full((LENGTH,), 10.0, jnp.float32)
