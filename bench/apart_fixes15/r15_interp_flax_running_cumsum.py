"""Block-wise prefix sum over the sequence, as a Flax-style module with a debug config.

The module's config is frozen; `ScanLayer.debug()` derives an interpreted copy with
`dataclasses.replace(..., interpret=True)` for the CPU notebook. The running total of all
earlier blocks is carried across the sequential grid in a VMEM row.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class ScanConfig:
  block_rows: int = 8
  width: int = 128
  interpret: bool = False


def _cumsum_body(x_ref, o_ref, *, cfg: ScanConfig):
  carry = pl.get_global(pltpu.VMEM((1, cfg.width), jnp.float32))

  @pl.when(pl.program_id(0) == 0)
  def _():
    carry[...] = jnp.zeros(carry.shape, jnp.float32)

  for r in range(cfg.block_rows):
    carry[...] += x_ref[pl.ds(r, 1), :]
    o_ref[pl.ds(r, 1), :] = carry[...]


class ScanLayer:
  def __init__(self, config: ScanConfig = ScanConfig()):
    self.config = config

  def debug(self):
    return ScanLayer(dataclasses.replace(self.config, interpret=True))

  def __call__(self, x):
    cfg = self.config
    spec = pl.BlockSpec((cfg.block_rows, cfg.width), lambda i: (i, 0))
    return pl.pallas_call(
        functools.partial(_cumsum_body, cfg=cfg),
        out_shape=jax.ShapeDtypeStruct(x.shape, jnp.float32),
        grid=(x.shape[0] // cfg.block_rows,),
        in_specs=[spec],
        out_specs=spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
        interpret=cfg.interpret,
    )(x)


def _inputs():
  return (jnp.arange(64 * 128, dtype=jnp.float32).reshape(64, 128) % 5,)


def target():
  return ScanLayer().debug(), _inputs(), "interpret"


def expected():
  return jnp.cumsum(_inputs()[0], axis=0)


if __name__ == "__main__":
  print(jnp.array_equal(ScanLayer().debug()(*_inputs()), expected()))
