"""Times `clean_r16_actlib.softcap` against the XLA reference over a few shapes.

    python r16_softcap_bench.py --rows 4096 --cols 256 --iters 50
"""
# fix-rate: clean
import argparse
import functools
import time

import jax
import jax.numpy as jnp

import clean_r16_actlib


def reference(x, cap=30.0):
  return (jnp.tanh(x.astype(jnp.float32) / cap) * cap).astype(x.dtype)


def time_it(fn, *args, iters=20):
  fn(*args).block_until_ready()
  start = time.perf_counter()
  for _ in range(iters):
    out = fn(*args)
  out.block_until_ready()
  return (time.perf_counter() - start) / iters


def main(argv=None):
  parser = argparse.ArgumentParser()
  parser.add_argument("--rows", type=int, default=4096)
  parser.add_argument("--cols", type=int, default=256)
  parser.add_argument("--cap", type=float, default=30.0)
  parser.add_argument("--iters", type=int, default=20)
  args = parser.parse_args(argv)
  x = jax.random.normal(jax.random.key(0), (args.rows, args.cols), jnp.bfloat16)
  kernel = functools.partial(clean_r16_actlib.softcap, cap=args.cap)
  ref = jax.jit(functools.partial(reference, cap=args.cap))
  print(f"pallas {time_it(kernel, x, iters=args.iters) * 1e6:8.1f} us")
  print(f"xla    {time_it(ref, x, iters=args.iters) * 1e6:8.1f} us")


def target():
  x = jax.ShapeDtypeStruct((4 * clean_r16_actlib.BLOCK_ROWS, 256), jnp.bfloat16)
  return functools.partial(clean_r16_actlib.softcap, cap=50.0), (x,), "cuda"


if __name__ == "__main__":
  main()
