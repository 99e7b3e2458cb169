"""Gradient accumulation over micro-batches in one launch (Mosaic GPU).

Block ``i`` takes micro-batch ``i``'s gradient tile, scales it by that
micro-batch's loss weight and parks it in a workspace; the last block to start
(block 0 waits on the shared counter) folds the parked tiles into the
accumulated gradient. This replaces a ``lax.scan`` of ``num_micro`` tiny adds in
the optimizer step.

``AccumulationPlan`` carries the geometry; ``accumulate`` is the entry point the
trainer calls under ``jax.jit``.
"""

# fix-rate: kind=output meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class AccumulationPlan:
  num_micro: int
  tile: tuple[int, int] = (64, 128)

  @property
  def workspace_type(self):
    return plgpu.GMEM((self.num_micro, *self.tile), jnp.float32)


def _fold_body(g_gmem, w_gmem, acc_gmem, tile_smem, sum_smem, loaded, *, plan):
  i = jax.lax.axis_index("micro")
  parked = pl.get_global(plan.workspace_type)
  arrived = pl.get_global(plgpu.SemaphoreType.REGULAR)

  plgpu.copy_gmem_to_smem(g_gmem.at[i], tile_smem, loaded)
  plgpu.barrier_wait(loaded)
  tile_smem[...] = tile_smem[...] * w_gmem[i]
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(tile_smem, parked.at[i])
  plgpu.wait_smem_to_gmem(0)

  @pl.when(i != 0)
  def _arrive():
    pl.semaphore_signal(arrived, 1)

  @pl.when(i == 0)
  def _fold():
    pl.semaphore_wait(arrived, plan.num_micro - 1)
    total = jnp.zeros(plan.tile, jnp.float32)
    for j in range(plan.num_micro):
      plgpu.copy_gmem_to_smem(parked.at[j], tile_smem, loaded)
      plgpu.barrier_wait(loaded)
      total = total + tile_smem[...]
    sum_smem[...] = total
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(sum_smem, acc_gmem)
    plgpu.wait_smem_to_gmem(0)


@functools.partial(jax.jit, static_argnames=("plan",))
def accumulate(grads: jax.Array, weights: jax.Array, plan: AccumulationPlan):
  """``grads``: ``(num_micro, *tile)`` f32, ``weights``: ``(num_micro,)``."""
  return plgpu.kernel(
      functools.partial(_fold_body, plan=plan),
      out_type=jax.ShapeDtypeStruct(plan.tile, jnp.float32),
      scratch_types=[
          plgpu.SMEM(plan.tile, jnp.float32),
          plgpu.SMEM(plan.tile, jnp.float32),
          plgpu.Barrier(),
      ],
      grid=(plan.num_micro,),
      grid_names=("micro",),
  )(grads, weights)


PLAN = AccumulationPlan(num_micro=4)


def target():
  return (
      functools.partial(accumulate, plan=PLAN),
      (
          jax.ShapeDtypeStruct((PLAN.num_micro, *PLAN.tile), jnp.float32),
          jax.ShapeDtypeStruct((PLAN.num_micro,), jnp.float32),
      ),
      "cuda",
  )


if __name__ == "__main__":
  g = jnp.ones((PLAN.num_micro, *PLAN.tile), jnp.float32)
  print(accumulate(g, jnp.full((PLAN.num_micro,), 0.25), plan=PLAN)[0, :4])
