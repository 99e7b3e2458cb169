"""A Mosaic GPU kernel whose per-block arrival counters are a REGULAR semaphore array sized by a plan from a
table keyed by the input's shape: the signal is given the whole array; each block signals its own counter."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Plan:
  blocks: int
  rows: int


PLANS = {(32, 128): Plan(blocks=2, rows=16), (128, 128): Plan(blocks=4, rows=32)}


def counted_copy(x):
  plan = PLANS[x.shape]

  def body(x_gmem, o_gmem):
    b = jax.lax.axis_index("b")
    arrived = pl.get_global(plgpu.SemaphoreType.REGULAR((plan.blocks,)))
    rows = pl.ds(b * plan.rows, plan.rows)
    o_gmem[rows] = x_gmem[rows] + 1.0
    pl.semaphore_signal(arrived.at[b])

  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(plan.blocks,),
                      grid_names=("b",))(x)


def target():
  return counted_copy, (jax.ShapeDtypeStruct((32, 128), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(counted_copy(jnp.ones((32, 128), jnp.float32))[0, :4])
