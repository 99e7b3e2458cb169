"""Driver of the load-balancing study: auxiliary loss from the per-expert loads.

    python r15_router_driver.py --preset wide --tokens 4096
"""
# fix-rate: kind=scratch meaning=preserving

import argparse

import jax
import jax.numpy as jnp

from r15_router_config import EXPERT_LANES, PRESETS
from r15_router_kernel import expert_load


def load_balance_loss(router_logits, preset="base"):
  cfg = PRESETS[preset]
  load = expert_load(router_logits, cfg)[0, : cfg.num_experts]
  frac = load / router_logits.shape[0]
  return cfg.num_experts * jnp.sum(frac * frac)


def target():
  logits = jax.ShapeDtypeStruct((1024, EXPERT_LANES), jnp.float32)
  return jax.jit(load_balance_loss, static_argnames="preset"), (logits,), "tpu"


def main(argv=None):
  parser = argparse.ArgumentParser()
  parser.add_argument("--preset", choices=sorted(PRESETS), default="base")
  parser.add_argument("--tokens", type=int, default=1024)
  args = parser.parse_args(argv)
  logits = jax.random.normal(jax.random.key(0), (args.tokens, EXPERT_LANES))
  print(args.preset, float(load_balance_loss(logits, args.preset)))


if __name__ == "__main__":
  main()
