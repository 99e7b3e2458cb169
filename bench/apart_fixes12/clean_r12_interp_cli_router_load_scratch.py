"""MoE router load statistics: tokens routed to each expert, summed over token blocks (TPU kernel).

Driver: `python clean_r12_interp_cli_router_load_scratch.py --backend interpret --tokens 64 --experts 128`.
`--backend tpu` runs compiled; `interpret` uses `pltpu.InterpretParams()` so it runs on any host.
"""
# fix-rate: clean

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class Backend(enum.Enum):
  TPU = "tpu"
  INTERPRET = "interpret"

  def interpret_arg(self):
    return pltpu.InterpretParams() if self is Backend.INTERPRET else False


@dataclasses.dataclass(frozen=True)
class LoadConfig:
  block_tokens: int
  num_experts: int


def get_default_config(tokens: int, experts: int) -> LoadConfig:
  return LoadConfig(block_tokens=min(tokens, 256), num_experts=experts)


def _expert_load_kernel(onehot_ref, o_ref, load, *, cfg: LoadConfig):
  t = pl.program_id(0)

  @pl.when(t == 0)
  def _init():
    load[...] = jnp.zeros_like(load)

  per_block = jnp.sum(onehot_ref[...].astype(jnp.float32), axis=0, keepdims=True)
  load[...] += jnp.broadcast_to(per_block, load.shape)

  @pl.when(t == pl.num_programs(0) - 1)
  def _emit():
    o_ref[...] = load[...]


def expert_load(onehot: jax.Array, backend: Backend = Backend.TPU) -> jax.Array:
  tokens, experts = onehot.shape
  cfg = get_default_config(tokens, experts)
  out = pl.pallas_call(
      functools.partial(_expert_load_kernel, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((8, experts), jnp.float32),
      grid=(tokens // cfg.block_tokens,),
      in_specs=[pl.BlockSpec((cfg.block_tokens, experts), lambda t: (t, 0))],
      out_specs=pl.BlockSpec((8, experts), lambda t: (0, 0)),
      scratch_shapes=[pltpu.VMEM((8, cfg.num_experts), jnp.float32)],
      interpret=backend.interpret_arg(),
  )(onehot)
  return out[0]


def _routing(tokens=512, experts=128):
  choice = (jnp.arange(tokens) * 37) % experts
  return jax.nn.one_hot(choice, experts, dtype=jnp.int32)


def expected():
  return np.asarray(_routing()).sum(axis=0).astype(np.float32)


def target():
  return functools.partial(expert_load, backend=Backend.INTERPRET), (_routing(),), "interpret"


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", type=Backend, choices=list(Backend), default=Backend.TPU)
  parser.add_argument("--tokens", type=int, default=512)
  parser.add_argument("--experts", type=int, default=128)
  args = parser.parse_args()
  routing = _routing(args.tokens, args.experts)
  load = jax.jit(functools.partial(expert_load, backend=args.backend))(routing)
  print("max/mean expert load:", float(load.max() / load.mean()))


if __name__ == "__main__":
  main()
