"""Quantize-dequantize round trip (Mosaic GPU), with a `--debug` switch that
runs the kernel on the CPU interpreter for bring-up.

The staging resources are passed around as a `(tile, fence)` tuple, the way
the TPU version passed `(vmem_tile, semaphore)`.
"""
# fix-rate: kind=scratch meaning=preserving
import argparse
import functools
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SCALE = 0.25


def _round_trip(x, resources):
  tile, fence = resources
  tile[...] = jnp.round(x / SCALE)
  pl.semaphore_signal(fence)
  pl.semaphore_wait(fence)
  return tile[...] * SCALE


def _qdq_body(x_ref, o_ref):
  resources = (pl.get_global(plgpu.SMEM(x_ref.shape, jnp.float32)),
               pl.get_global(plgpu.SemaphoreType.REGULAR))
  o_ref[...] = _round_trip(x_ref[...], resources)


def make_qdq(debug: bool):
  @jax.jit
  def qdq(x):
    return plgpu.kernel(
        _qdq_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=debug,
    )(x)
  return qdq


def main(argv):
  parser = argparse.ArgumentParser()
  parser.add_argument("--debug", action="store_true")
  args = parser.parse_args(argv)
  x = jnp.asarray(np.random.default_rng(1).normal(size=(8, 128)), jnp.float32)
  print(make_qdq(args.debug)(x)[0, :8])
  return 0


_X = np.linspace(-3.0, 3.0, 8 * 128, dtype=np.float32).reshape(8, 128)


def target():
  return make_qdq(debug=True), (jnp.asarray(_X),), "interpret"


def expected():
  return np.round(_X / SCALE) * SCALE


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
