"""Dequantize-and-scale with one producer and one consumer warpgroup.

Warpgroup 0 issues the TMA load of the int8 block into shared memory; warpgroup 1 waits on the TMA
barrier, converts to bf16, applies the per-tensor scale and stores the block back.  The kernel is
launched with `num_threads=2, thread_name="wg"`, so every ref the two roles share is allocated once per
block.  The staging helpers below take refs, so they can be reused by the fused variants of this op.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

# fix-rate: kind=barrier_scratch meaning=preserving

PRODUCER, CONSUMER = 0, 1


@dataclasses.dataclass(frozen=True)
class DequantSpec:
  rows: int
  cols: int
  block_rows: int = 64
  scale: float = 0.05

  @property
  def num_blocks(self) -> int:
    return self.rows // self.block_rows

  @property
  def tile(self) -> tuple[int, int]:
    return (self.block_rows, self.cols)


def _stage_in(src_gmem, dst_smem, landed):
  """Starts the TMA of `src_gmem` into `dst_smem`; `landed` completes when the bytes are there."""
  plgpu.copy_gmem_to_smem(src_gmem, dst_smem, landed)


def _stage_out(src_smem, dst_gmem):
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(src_smem, dst_gmem)
  plgpu.wait_smem_to_gmem(0)


def _dequant_body(q_gmem, o_gmem, q_smem, o_smem, *, spec: DequantSpec):
  block = jax.lax.axis_index("blocks")
  rows = pl.ds(block * spec.block_rows, spec.block_rows)
  wg = jax.lax.axis_index("wg")
  # Shared by both warpgroups: the producer's TMA arrives on it, the consumer waits on it.
  landed = pl.get_global(plgpu.Barrier(num_arrivals=1))

  @pl.when(wg == PRODUCER)
  def _produce():
    _stage_in(q_gmem.at[rows], q_smem, landed)

  @pl.when(wg == CONSUMER)
  def _consume():
    plgpu.barrier_wait(landed)
    o_smem[...] = (q_smem[...].astype(jnp.float32) * spec.scale).astype(o_smem.dtype)
    _stage_out(o_smem, o_gmem.at[rows])


@functools.partial(jax.jit, static_argnames=("spec",))
def dequantize(q: jax.Array, spec: DequantSpec) -> jax.Array:
  kernel = plgpu.kernel(
      functools.partial(_dequant_body, spec=spec),
      out_type=jax.ShapeDtypeStruct((spec.rows, spec.cols), jnp.bfloat16),
      scratch_types=[plgpu.SMEM(spec.tile, jnp.int8), plgpu.SMEM(spec.tile, jnp.bfloat16)],
      grid=(spec.num_blocks,),
      grid_names=("blocks",),
      num_threads=2,
      thread_name="wg",
  )
  return kernel(q)


SPEC = DequantSpec(rows=512, cols=128)


def target():
  return functools.partial(dequantize, spec=SPEC), (jax.ShapeDtypeStruct((SPEC.rows, SPEC.cols), jnp.int8),), "cuda"


if __name__ == "__main__":
  q = jax.random.randint(jax.random.key(1), (SPEC.rows, SPEC.cols), -128, 127, jnp.int8)
  print(dequantize(q, SPEC)[:2, :4])
