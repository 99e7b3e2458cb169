"""A TPU gather of two row blocks whose config comes from a tuning table keyed by the input's shape: the DMA
semaphore pair is given whole to each copy; the table's entry says it has two, so each copy takes its own."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GatherConfig:
  rows: int
  pair: int = 2


TUNED = {(64, 128): GatherConfig(rows=16), (256, 256): GatherConfig(rows=64)}


def _gather(x_hbm, o_ref, landing, sems, *, cfg):
  for half in range(cfg.pair):
    copy = pltpu.make_async_copy(x_hbm.at[pl.ds(half * cfg.rows, cfg.rows)], landing.at[half], sems)
    copy.start()
    copy.wait()
  o_ref[...] = landing[0] + landing[1]


def gather_pair(x):
  cfg = TUNED[x.shape]
  return pl.pallas_call(
      functools.partial(_gather, cfg=cfg),
      out_shape=jax.ShapeDtypeStruct((cfg.rows, x.shape[1]), x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.VMEM((cfg.pair, cfg.rows, x.shape[1]), x.dtype), pltpu.SemaphoreType.DMA((cfg.pair,))],
  )(x)


def target():
  return gather_pair, (jax.ShapeDtypeStruct((64, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(gather_pair(jnp.ones((64, 128), jnp.float32)).sum())
