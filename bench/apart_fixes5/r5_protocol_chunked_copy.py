"""Chunked HBM -> VMEM copy on TPU with all chunk DMAs in flight at once (a KV-cache page loader).

The plan is anything satisfying the `CopyPlan` protocol: the serving code passes its own page table
objects; `FixedPlan` is the default.
"""
# fix-rate: kind=scratch meaning=preserving

import dataclasses
from typing import Protocol

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class CopyPlan(Protocol):
  @property
  def num_chunks(self) -> int: ...

  @property
  def chunk_rows(self) -> int: ...


@dataclasses.dataclass(frozen=True)
class FixedPlan:
  num_chunks: int = 4
  chunk_rows: int = 64


def _make_body(plan: CopyPlan):
  def body(src_hbm, dst_vmem):
    sems = pl.get_global(pltpu.SemaphoreType.DMA((plan.num_chunks,)))
    copies = []
    for c in range(plan.num_chunks):
      rows = pl.ds(c * plan.chunk_rows, plan.chunk_rows)
      copy = pltpu.make_async_copy(src_hbm.at[rows], dst_vmem.at[rows], sems.at[c])
      copy.start()
      copies.append(copy)
    for copy in copies:
      copy.wait()

  return body


def load_pages(x, plan: CopyPlan = FixedPlan()):
  if x.shape[0] != plan.num_chunks * plan.chunk_rows:
    raise ValueError("the plan does not cover the array")
  return pl.pallas_call(
      _make_body(plan),
      out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
  )(x)


def target():
  return load_pages, (jnp.ones((256, 128), jnp.float32),), "tpu"
