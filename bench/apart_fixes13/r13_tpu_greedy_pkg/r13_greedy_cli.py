"""Command-line smoke run of the greedy decoding kernel: `python r13_greedy_cli.py --vocab 32768`."""

import argparse

import jax
import jax.numpy as jnp

import r13_greedy_ops as ops


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--batch", type=int, default=16)
  parser.add_argument("--vocab", type=int, default=32768)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  logits = jax.random.normal(jax.random.key(args.seed), (args.batch, args.vocab), jnp.bfloat16)
  got = ops.greedy_tokens(logits)
  want = jnp.argmax(logits, axis=-1)
  print("tokens:", got[:8], "match:", bool(jnp.all(got == want)))


if __name__ == "__main__":
  main()
