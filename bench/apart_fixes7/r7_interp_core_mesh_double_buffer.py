"""Manually double-buffered streaming affine map on a TPU core mesh, interpreted off-TPU.

`stream_affine(x)` computes `x * SCALE + SHIFT` chunk by chunk: while chunk `i` is transformed in
VMEM slot `i % 2`, the DMA of chunk `i + 1` into the other slot is already in flight. This is the
hand-rolled form of what `emit_pipeline` does, kept for a kernel that later fuses a gather into the
load. The number of slots (and so of DMA semaphores) comes from `StreamConfig.slots`.

The launcher picks `pltpu.InterpretParams()` whenever the default backend is not a TPU, so the unit
test below runs on a CPU-only CI machine.
"""

# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SCALE = 2.0
SHIFT = 1.0


@dataclasses.dataclass(frozen=True)
class StreamConfig:
  chunk_rows: int = 8
  cols: int = 128
  slots: int = 2

  def vmem_slots(self, dtype):
    return pltpu.VMEM((self.slots, self.chunk_rows, self.cols), dtype)


def _interpret_mode():
  return pltpu.InterpretParams() if jax.default_backend() != "tpu" else False


def _stream_body(x_hbm, o_hbm, buf, *, cfg: StreamConfig, num_chunks: int):
  sems = pl.get_global(pltpu.SemaphoreType.DMA((cfg.slots,)))

  def load(i, slot):
    return pltpu.make_async_copy(x_hbm.at[pl.ds(i * cfg.chunk_rows, cfg.chunk_rows)],
                                 buf.at[slot], sems.at[slot])

  load(0, 0).start()

  @pl.loop(0, num_chunks)
  def _chunk(i):
    slot = i % cfg.slots

    @pl.when(i + 1 < num_chunks)
    def _prefetch():
      load(i + 1, (i + 1) % cfg.slots).start()

    load(i, slot).wait()
    buf[slot] = buf[slot] * SCALE + SHIFT
    store = pltpu.make_async_copy(buf.at[slot], o_hbm.at[pl.ds(i * cfg.chunk_rows, cfg.chunk_rows)],
                                  sems.at[slot])
    store.start()
    store.wait()


def stream_affine(x: jax.Array, cfg: StreamConfig = StreamConfig()) -> jax.Array:
  rows, cols = x.shape
  assert cols == cfg.cols and rows % cfg.chunk_rows == 0, (x.shape, cfg)
  mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
  return pl.kernel(
      functools.partial(_stream_body, cfg=cfg, num_chunks=rows // cfg.chunk_rows),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      mesh=mesh,
      scratch_types=[cfg.vmem_slots(x.dtype)],
      interpret=_interpret_mode(),
  )(x)


_X = np.arange(48 * 128, dtype=np.float32).reshape(48, 128) % 11


def target():
  return jax.jit(stream_affine), (jnp.asarray(_X),), "interpret"


def expected():
  return _X * SCALE + SHIFT


def test_stream_affine():
  np.testing.assert_array_equal(np.asarray(jax.jit(stream_affine)(jnp.asarray(_X))), expected())


if __name__ == "__main__":
  test_stream_affine()
  print("ok")
