"""Grid specs of the row-sum kernel, kept apart from the kernel bodies."""

import dataclasses

from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Tiling:
  rows: int
  cols: int
  steps: int


def row_sum_spec(tiling: Tiling) -> pltpu.PrefetchScalarGridSpec:
  return pltpu.PrefetchScalarGridSpec(
      num_scalar_prefetch=0,
      grid=(tiling.steps,),
      in_specs=[pl.BlockSpec((tiling.rows, tiling.cols), lambda k: (0, k))],
      out_specs=pl.BlockSpec((tiling.rows, tiling.cols), lambda k: (0, 0)),
  )
