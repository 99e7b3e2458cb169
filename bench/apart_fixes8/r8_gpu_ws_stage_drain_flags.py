"""Warp-specialised staging copy: one warpgroup stages, the other drains (Mosaic GPU).

Warpgroup 0 (the producer) TMA-loads the input tile, applies the bias and
leaves the result in shared memory; warpgroup 1 (the consumer) stores it. Two
flags order them: ``staged`` (producer -> consumer) and ``drained`` (consumer ->
producer, so the producer does not retire while the store still reads its
tile). A single CTA does the whole tile: these are the small bias tiles of the
LoRA adapters, one launch per adapter.
"""

# fix-rate: kind=semaphore_array meaning=preserving

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

PRODUCER, CONSUMER = 0, 1


class StageDrainFlags:
  """The two one-shot flags of the stage/drain protocol."""

  def __init__(self):
    self.staged = pl.get_global(plgpu.SemaphoreType.REGULAR)
    self.drained = pl.get_global(plgpu.SemaphoreType.REGULAR)

  def publish_staged(self):
    pl.semaphore_signal(self.staged, 1)

  def await_staged(self):
    pl.semaphore_wait(self.staged, 1)

  def publish_drained(self):
    pl.semaphore_signal(self.drained, 1)

  def await_drained(self):
    pl.semaphore_wait(self.drained, 1)


def _bias_body(x_gmem, o_gmem, tile_smem, loaded, *, bias: float):
  wg = jax.lax.axis_index("wg")
  flags = StageDrainFlags()

  @pl.when(wg == PRODUCER)
  def _produce():
    plgpu.copy_gmem_to_smem(x_gmem, tile_smem, loaded)
    plgpu.barrier_wait(loaded)
    tile_smem[...] = tile_smem[...] + bias
    plgpu.commit_smem()
    flags.publish_staged()
    flags.await_drained()

  @pl.when(wg == CONSUMER)
  def _drain():
    flags.await_staged()
    plgpu.copy_smem_to_gmem(tile_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)
    flags.publish_drained()


@functools.partial(jax.jit, static_argnames=("bias",))
def add_adapter_bias(x: jax.Array, bias: float) -> jax.Array:
  return plgpu.kernel(
      functools.partial(_bias_body, bias=bias),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=[plgpu.SMEM(x.shape, x.dtype), plgpu.Barrier()],
      num_threads=2,
      thread_name="wg",
  )(x)


def target():
  return (
      functools.partial(add_adapter_bias, bias=0.25),
      (jax.ShapeDtypeStruct((128, 128), jnp.float32),),
      "cuda",
  )


if __name__ == "__main__":
  print(add_adapter_bias(jnp.zeros((128, 128), jnp.float32), bias=0.25)[0, :4])
