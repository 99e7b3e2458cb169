"""`pl.kernel(..., mesh=plan.mesh())`: the `plgpu.Mesh` is made by a method of the plan, its grid names read from
`self`. A run_scoped REGULAR semaphore collective over that grid axis is what get_global allocates."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Plan:
  blocks: int = 2
  axis: str = "cta"

  def mesh(self):
    return plgpu.Mesh(grid=(self.blocks,), grid_names=(self.axis,))


PLAN = Plan()


def body(x_ref, o_ref):
  b = jax.lax.axis_index(PLAN.axis)

  def finish(flag):
    @pl.when(b == 1)
    def _():
      pl.semaphore_signal(flag)

    @pl.when(b == 0)
    def _():
      pl.semaphore_wait(flag)
      o_ref[...] = x_ref[...] * 2.0

  finish(pl.get_global(plgpu.SemaphoreType.REGULAR))


def run(x):
  return pl.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=PLAN.mesh())(x)


def target():
  return run, (jax.ShapeDtypeStruct((256,), jnp.float32),), "cuda"
