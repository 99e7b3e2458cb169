"""Warp-specialized logit softcap with a two-way hand-off (Mosaic GPU, one CTA, two warpgroups).

Warpgroup 0 loads the tile and waits until warpgroup 1 has drained its output; warpgroup 1 computes and
stores. `ready` (loader -> computer) is a global semaphore so that an external consumer can later
be chained on it; `drained` (computer -> loader) is only needed inside the kernel and is scoped to
the two warpgroups with `pl.run_scoped(..., collective_axes="wg")`.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

THREAD_AXIS = "wg"


@dataclasses.dataclass(frozen=True)
class SoftcapConfig:
  rows: int = 64
  cols: int = 256
  cap: float = 50.0

  def scratch_types(self, dtype):
    return [plgpu.SMEM((self.rows, self.cols), dtype), plgpu.Barrier(num_arrivals=1)]


_TABLE = {
    (jnp.dtype("float32"), (64, 256)): SoftcapConfig(),
    (jnp.dtype("bfloat16"), (64, 256)): SoftcapConfig(cap=30.0),
}


def get_default_config(dtype, shape) -> SoftcapConfig:
  return _TABLE.get((jnp.dtype(dtype), tuple(shape)), SoftcapConfig(*shape))


def _softcap_body(x_gmem, o_gmem, tile, loaded, *, cfg: SoftcapConfig):
  wg = jax.lax.axis_index(THREAD_AXIS)
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)

  def with_drained(drained):
    @pl.when(wg == 0)
    def _load():
      plgpu.copy_gmem_to_smem(x_gmem, tile, loaded)
      plgpu.barrier_wait(loaded)
      pl.semaphore_signal(ready)
      pl.semaphore_wait(drained)

    @pl.when(wg == 1)
    def _compute():
      pl.semaphore_wait(ready)
      tile[...] = (jnp.tanh(tile[...].astype(jnp.float32) / cfg.cap) * cfg.cap).astype(tile.dtype)
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(tile, o_gmem)
      plgpu.wait_smem_to_gmem(0)
      pl.semaphore_signal(drained)

  pl.run_scoped(with_drained, plgpu.SemaphoreType.REGULAR, collective_axes=THREAD_AXIS)


@functools.partial(jax.jit, static_argnames=("cfg",))
def softcap(x: jax.Array, cfg: SoftcapConfig | None = None) -> jax.Array:
  cfg = cfg or get_default_config(x.dtype, x.shape)
  return plgpu.kernel(
      functools.partial(_softcap_body, cfg=cfg),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      scratch_types=cfg.scratch_types(x.dtype),
      num_threads=2,
      thread_name=THREAD_AXIS,
  )(x)


def target():
  return softcap, (jax.ShapeDtypeStruct((64, 256), jnp.float32),), "cuda"
