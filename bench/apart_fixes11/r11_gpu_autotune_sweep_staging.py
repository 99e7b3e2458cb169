"""Autotuning harness for a Hopper SiLU-and-scale kernel.

`autotune()` launches every candidate block size on the same input and keeps the fastest;
`target()` traces the sweep the way the tuner runs it (every candidate in one jit).
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
import itertools
import time

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Candidate:
  block: int
  upcast: bool

  def __str__(self):
    return f"block={self.block} upcast={self.upcast}"


CANDIDATES = [Candidate(b, u) for b, u in itertools.product((128, 256), (True, False))]


def silu_scale(x, scale, cand: Candidate):
  n = x.shape[0]
  acc_dtype = jnp.float32 if cand.upcast else x.dtype

  def body(x_ref, s_ref, o_ref):
    i = jax.lax.axis_index("i")
    window = pl.ds(i * cand.block, cand.block)
    work = pl.get_global(plgpu.SMEM((cand.block,), acc_dtype))
    work[...] = x_ref[window].astype(acc_dtype)
    work[...] = work[...] * jax.nn.sigmoid(work[...])
    o_ref[window] = (work[...] * s_ref[window].astype(acc_dtype)).astype(o_ref.dtype)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      grid=(n // cand.block,),
      grid_names=("i",),
  )(x, scale)


def sweep(x, scale):
  """Every candidate's output, so the tuner can also check they agree."""
  return [silu_scale(x, scale, c) for c in CANDIDATES]


def autotune(x, scale, repeats=5):
  timings = {}
  for cand in CANDIDATES:
    fn = jax.jit(lambda a, s, c=cand: silu_scale(a, s, c))
    jax.block_until_ready(fn(x, scale))
    start = time.perf_counter()
    for _ in range(repeats):
      jax.block_until_ready(fn(x, scale))
    timings[cand] = (time.perf_counter() - start) / repeats
  best = min(timings, key=timings.get)
  print(f"best: {best} ({timings[best] * 1e6:.1f} us)")
  return best


def target():
  spec = jax.ShapeDtypeStruct((1024,), jnp.bfloat16)
  return sweep, (spec, spec), "cuda"


if __name__ == "__main__":
  xs = jnp.linspace(-4, 4, 1024, dtype=jnp.bfloat16)
  autotune(xs, jnp.ones_like(xs))
