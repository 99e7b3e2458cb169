"""Leaky-ReLU with a two-phase write (Mosaic GPU), driven from `main(argv)`.

`--mode interpret` runs the kernel on the CPU for debugging; `--mode compiled`
is the default on GPU hosts.
"""
# fix-rate: kind=scratch meaning=preserving
import argparse
import enum
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Mode(enum.Enum):
  COMPILED = "compiled"
  INTERPRET = "interpret"


NEGATIVE_SLOPE = 0.125


def _leaky_relu_body(x_ref, o_ref):
  written = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = jnp.maximum(x_ref[...], 0.0)
  pl.semaphore_signal(written)
  pl.semaphore_wait(written)
  o_ref[...] = o_ref[...] + NEGATIVE_SLOPE * jnp.minimum(x_ref[...], 0.0)


def build(mode: Mode):
  def leaky_relu(x):
    return plgpu.kernel(
        _leaky_relu_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=mode is Mode.INTERPRET,
    )(x)
  return jax.jit(leaky_relu)


def main(argv):
  parser = argparse.ArgumentParser()
  parser.add_argument("--mode", type=Mode, choices=list(Mode), default=Mode.COMPILED)
  args = parser.parse_args(argv)
  x = jnp.asarray(np.linspace(-1, 1, 8 * 128, dtype=np.float32).reshape(8, 128))
  print(build(args.mode)(x)[0, :4])
  return 0


_X = (np.arange(8 * 128, dtype=np.float32).reshape(8, 128) % 9) - 4.0


def target():
  return build(Mode("interpret")), (jnp.asarray(_X),), "interpret"


def expected():
  return np.maximum(_X, 0) + NEGATIVE_SLOPE * np.minimum(_X, 0)


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
