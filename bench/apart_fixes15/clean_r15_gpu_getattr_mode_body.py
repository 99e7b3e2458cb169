"""Exponential-moving-average parameter update kernels for an optimizer, one per mode.

`ParamUpdater(mode)` picks its kernel body with `getattr(self, f"_{mode}_body")`, the way the
trainer's config string ("copy", "ema") selects it. Each body brings the parameter tile into
shared memory with a TMA copy before touching it; both take the load barrier as scratch.
"""
# fix-rate: clean

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE = (128, 128)


class ParamUpdater:
  MODES = ("copy", "ema")

  def __init__(self, mode: str = "ema", decay: float = 0.999):
    if mode not in self.MODES:
      raise ValueError(f"unknown mode {mode!r}, expected one of {self.MODES}")
    self.mode = mode
    self.decay = decay

  @property
  def body(self):
    return getattr(self, f"_{self.mode}_body")

  def _copy_body(self, param_ref, shadow_ref, out_ref, param_smem, load_barrier):
    del shadow_ref
    plgpu.copy_gmem_to_smem(param_ref, param_smem, load_barrier)
    plgpu.barrier_wait(load_barrier)
    out_ref[...] = param_smem[...]

  def _ema_body(self, param_ref, shadow_ref, out_ref, param_smem, load_barrier):
    plgpu.copy_gmem_to_smem(param_ref, param_smem, load_barrier)
    plgpu.barrier_wait(load_barrier)
    out_ref[...] = self.decay * shadow_ref[...] + (1.0 - self.decay) * param_smem[...]

  def scratch_types(self):
    return [plgpu.SMEM(TILE, jnp.float32), plgpu.Barrier(num_arrivals=1)]

  def __call__(self, param, shadow):
    return plgpu.kernel(
        self.body,
        out_type=jax.ShapeDtypeStruct(param.shape, param.dtype),
        scratch_types=self.scratch_types(),
    )(param, shadow)


def update_shadow_params(params, shadows, mode="ema"):
  updater = ParamUpdater(mode)
  return jax.tree.map(updater, params, shadows)


def target():
  spec = jax.ShapeDtypeStruct(TILE, jnp.float32)
  params = {"wq": spec, "wk": spec}
  return update_shadow_params, (params, params), "cuda"


if __name__ == "__main__":
  p = {"w": jnp.ones(TILE)}
  print(jax.jit(update_shadow_params)(p, p)["w"][0, 0])
