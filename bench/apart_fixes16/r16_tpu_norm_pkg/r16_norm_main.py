"""Runs one RMS norm launcher of `r16_normlib` on random data.

    python r16_norm_main.py --backend tpu --rows 1024 --hidden 4096
"""
# fix-rate: kind=scratch meaning=preserving
import argparse
import functools
import sys

import jax
import jax.numpy as jnp

import r16_normlib
from r16_normlib import Backend, NormConfig


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", choices=[b.value for b in Backend], default="tpu")
  parser.add_argument("--rows", type=int, default=1024)
  parser.add_argument("--hidden", type=int, default=4096)
  parser.add_argument("--block-rows", type=int, default=8)
  return parser.parse_args(argv)


def build(args):
  cfg = NormConfig(block_rows=args.block_rows)
  launcher = r16_normlib.LAUNCHERS[Backend(args.backend)]
  return functools.partial(launcher, cfg=cfg)


def main(argv):
  args = parse_args(argv)
  fn = build(args)
  key_x, key_w = jax.random.split(jax.random.key(0))
  x = jax.random.normal(key_x, (args.rows, args.hidden), jnp.bfloat16)
  w = jax.random.normal(key_w, (1, args.hidden), jnp.bfloat16)
  print(fn(x, w).block_until_ready()[:2, :4])
  return 0


def target():
  args = parse_args(["--backend", "tpu", "--rows", "64", "--hidden", "256"])
  x = jax.ShapeDtypeStruct((args.rows, args.hidden), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((1, args.hidden), jnp.bfloat16)
  return build(args), (x, w), "tpu"


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
