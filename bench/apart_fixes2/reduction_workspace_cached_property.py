"""A two-pass column reduction whose partial sums live in a GMEM workspace described by a cached property.

The first pass writes one partial sum per chunk into the workspace, the second adds the partials up.
`ReductionPlan.workspace` is a `functools.cached_property` so that planning happens once per shape.
The author reached the workspace with `pl.get_global`, as if it were a global scratch array.
"""
# fix-rate: kind=output meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass
class ReductionPlan:
  length: int = 1024
  chunk: int = 128
  dtype: object = jnp.float32

  @property
  def chunks(self) -> int:
    return self.length // self.chunk

  @functools.cached_property
  def workspace(self):
    """Where the per-chunk partial sums go between the two passes."""
    return plgpu.GMEM((self.chunk,), self.dtype)

  @functools.cached_property
  def result(self):
    return jax.ShapeDtypeStruct((self.chunk,), self.dtype)

  @functools.cached_property
  def operand(self):
    return jax.ShapeDtypeStruct((self.length,), self.dtype)


def make_reduce(plan: ReductionPlan):
  def body(x_ref, out_ref):
    partials = pl.get_global(plan.workspace)
    acc = jnp.zeros((plan.chunk,), plan.dtype)
    for c in range(plan.chunks):
      acc = acc + x_ref[pl.ds(c * plan.chunk, plan.chunk)]
    partials[...] = acc
    out_ref[...] = partials[...] * (1.0 / plan.chunks)

  return plgpu.kernel(body, out_type=plan.result)


def mean_of_chunks(plan: ReductionPlan, x):
  return make_reduce(plan)(x)


def target():
  plan = ReductionPlan()
  return functools.partial(mean_of_chunks, plan), (plan.operand,), "cuda"


if __name__ == "__main__":
  plan = ReductionPlan()
  x = jnp.arange(plan.length, dtype=plan.dtype)
  got = jax.jit(functools.partial(mean_of_chunks, plan))(x)
  want = np.asarray(x).reshape(plan.chunks, plan.chunk).mean(axis=0)
  np.testing.assert_allclose(got, want, rtol=1e-6)
  print("mean of chunks ok")
