"""Weight streaming on TPU: a (layers, 8, 128) stack is streamed one layer at a time and summed.

A `StreamSlots` helper names the two buffer slots and their copy semaphores.
"""
# fix-rate: kind=index meaning=preserving

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_SLOTS = 2


@dataclasses.dataclass
class StreamSlots:
  weights_hbm: object
  buffers: object
  sems: object

  def copy(self, layer, slot):
    return pltpu.make_async_copy(
        self.weights_hbm.at[layer], self.buffers.at[slot], self.sems[slot])


def _stream_sum_kernel(weights_hbm, out_ref, buffers, sems):
  num_layers = weights_hbm.shape[0]
  slots = StreamSlots(weights_hbm, buffers, sems)
  slots.copy(0, 0).start()
  out_ref[...] = jnp.zeros_like(out_ref)

  @pl.loop(0, num_layers)
  def _layer(layer):
    slot = layer % NUM_SLOTS

    @pl.when(layer + 1 < num_layers)
    def _next():
      slots.copy(layer + 1, 1 - slot).start()

    slots.copy(layer, slot).wait()
    out_ref[...] += buffers[slot]


@jax.jit
def stream_sum(weights: jax.Array) -> jax.Array:
  _, rows, cols = weights.shape
  return pl.pallas_call(
      _stream_sum_kernel,
      out_shape=jax.ShapeDtypeStruct((rows, cols), weights.dtype),
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
      scratch_shapes=[pltpu.VMEM((NUM_SLOTS, rows, cols), weights.dtype),
                      pltpu.SemaphoreType.DMA((NUM_SLOTS,))],
  )(weights)


def target():
  return stream_sum, (jax.ShapeDtypeStruct((6, 8, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(stream_sum(jnp.ones((6, 8, 128), jnp.float32))[0, :4])
