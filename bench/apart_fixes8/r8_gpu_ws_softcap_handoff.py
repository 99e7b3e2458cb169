"""Logit soft-capping with a compute warpgroup and a store warpgroup (Mosaic GPU).

``softcap(x) = cap * tanh(x / cap)`` over a ``(block_rows, vocab_tile)`` slab of
logits per block. Warpgroup 0 loads and transforms the slab in shared memory;
warpgroup 1 waits for it to arrive on the ``ready`` handoff and issues the TMA
store, so the next launch's load overlaps the store in steady state.

The public entry point is the ``SoftcapLogits`` module object, configured once
per model from ``SoftcapConfig.from_model_config``.
"""

# fix-rate: kind=barrier_scratch meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class SoftcapConfig:
  cap: float = 30.0
  block_rows: int = 64
  vocab_tile: int = 128

  @classmethod
  def from_model_config(cls, model_cfg: dict) -> "SoftcapConfig":
    return cls(cap=float(model_cfg.get("final_logit_softcapping", 30.0)))


def _softcap_body(x_gmem, o_gmem, slab, loaded, *, cfg: SoftcapConfig):
  wg = jax.lax.axis_index("wg")
  r = jax.lax.axis_index("rows")
  v = jax.lax.axis_index("vocab")
  window = (
      pl.ds(r * cfg.block_rows, cfg.block_rows),
      pl.ds(v * cfg.vocab_tile, cfg.vocab_tile),
  )
  # Handoff from the compute warpgroup to the store warpgroup.
  ready = pl.get_global(plgpu.SemaphoreType.REGULAR)

  @pl.when(wg == 0)
  def _compute():
    plgpu.copy_gmem_to_smem(x_gmem.at[window], slab, loaded)
    plgpu.barrier_wait(loaded)
    slab[...] = jnp.tanh(slab[...] / cfg.cap) * cfg.cap
    plgpu.commit_smem()
    plgpu.barrier_arrive(ready)

  @pl.when(wg == 1)
  def _store():
    plgpu.barrier_wait(ready)
    plgpu.copy_smem_to_gmem(slab, o_gmem.at[window])
    plgpu.wait_smem_to_gmem(0)


class SoftcapLogits:
  def __init__(self, cfg: SoftcapConfig):
    self.cfg = cfg

  def __call__(self, logits: jax.Array) -> jax.Array:
    rows, vocab = logits.shape
    cfg = self.cfg
    return plgpu.kernel(
        functools.partial(_softcap_body, cfg=cfg),
        out_type=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
        scratch_types=[
            plgpu.SMEM((cfg.block_rows, cfg.vocab_tile), logits.dtype),
            plgpu.Barrier(),
        ],
        grid=(rows // cfg.block_rows, vocab // cfg.vocab_tile),
        grid_names=("rows", "vocab"),
        num_threads=2,
        thread_name="wg",
    )(logits)


def target():
  module = SoftcapLogits(SoftcapConfig.from_model_config({"final_logit_softcapping": 30.0}))
  return module, (jax.ShapeDtypeStruct((128, 512), jnp.float32),), "cuda"


if __name__ == "__main__":
  module = SoftcapLogits(SoftcapConfig())
  x = jnp.linspace(-100.0, 100.0, 128 * 512, dtype=jnp.float32).reshape(128, 512)
  print(jnp.max(jnp.abs(jax.jit(module)(x) - 30.0 * jnp.tanh(x / 30.0))))
