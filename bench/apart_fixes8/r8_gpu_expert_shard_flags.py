"""MoE expert-output fan-in flags, one per (expert, shard) block (Mosaic GPU).

Block ``(e, s)`` scales shard ``s`` of expert ``e``'s rows by the router weight
and raises its flag; the combine kernel that is fused behind it in the model
spins on the same flags. Shard 0 of every expert waits on its own flag last so
that the expert's first shard is known complete when the block retires.

Geometry comes from ``MoEGeometry`` (tokamax-style config object with derived
properties); the kernel is built once per geometry by ``make_expert_scale``.
"""

# fix-rate: kind=semaphore_shape meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True, kw_only=True)
class MoEGeometry:
  num_experts: int
  rows_per_expert: int
  shards: int
  d_model: int

  @property
  def shard_rows(self) -> int:
    return self.rows_per_expert // self.shards

  @property
  def num_blocks(self) -> int:
    return self.num_experts * self.shards

  @property
  def tokens(self) -> int:
    return self.num_experts * self.rows_per_expert


def _expert_scale_body(x_gmem, w_gmem, o_gmem, tile, loaded, *, geo: MoEGeometry):
  e = jax.lax.axis_index("expert")
  s = jax.lax.axis_index("shard")
  rows = pl.ds(e * geo.rows_per_expert + s * geo.shard_rows, geo.shard_rows)
  done = pl.get_global(plgpu.SemaphoreType.REGULAR((geo.num_blocks,)))

  plgpu.copy_gmem_to_smem(x_gmem.at[rows], tile, loaded)
  plgpu.barrier_wait(loaded)
  tile[...] = tile[...] * w_gmem[e]
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile, o_gmem.at[rows])
  plgpu.wait_smem_to_gmem(0)

  pl.semaphore_signal(done.at[e, s], 1)

  @pl.when(s == 0)
  def _():
    pl.semaphore_wait(done.at[e, s], 1)


def make_expert_scale(geo: MoEGeometry):
  @jax.jit
  def expert_scale(x, router_w):
    return plgpu.kernel(
        functools.partial(_expert_scale_body, geo=geo),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_types=[
            plgpu.SMEM((geo.shard_rows, geo.d_model), x.dtype),
            plgpu.Barrier(),
        ],
        grid=(geo.num_experts, geo.shards),
        grid_names=("expert", "shard"),
    )(x, router_w)

  return expert_scale


GEOMETRY = MoEGeometry(num_experts=4, rows_per_expert=128, shards=2, d_model=128)


def target():
  geo = GEOMETRY
  return (
      make_expert_scale(geo),
      (
          jax.ShapeDtypeStruct((geo.tokens, geo.d_model), jnp.float32),
          jax.ShapeDtypeStruct((geo.num_experts,), jnp.float32),
      ),
      "cuda",
  )


if __name__ == "__main__":
  geo = GEOMETRY
  x = jnp.ones((geo.tokens, geo.d_model), jnp.float32)
  print(make_expert_scale(geo)(x, jnp.arange(geo.num_experts, dtype=jnp.float32))[::128, 0])
