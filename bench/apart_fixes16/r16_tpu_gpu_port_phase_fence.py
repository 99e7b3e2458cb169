"""Two-phase block update (TPU port of the Mosaic GPU kernel).

The Mosaic GPU kernel fenced its two phases with a semaphore from
`pl.get_global(plgpu.SemaphoreType.REGULAR)`; the port swapped the module
for `pltpu` and kept the call.
"""
# fix-rate: kind=scratch meaning=preserving
import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class UpdateConfig:
  block_rows: int = 8
  lr: float = 0.01


def _phase_fence():
  return pl.get_global(pltpu.SemaphoreType.REGULAR)


def _update_kernel(cfg, p_ref, g_ref, o_ref):
  fence = _phase_fence()
  # Phase 1: the clipped gradient step.
  o_ref[...] = p_ref[...] - cfg.lr * jnp.clip(g_ref[...], -1.0, 1.0)
  pl.semaphore_signal(fence)
  pl.semaphore_wait(fence)
  # Phase 2: weight decay on the stepped parameters.
  o_ref[...] = o_ref[...] * (1.0 - cfg.lr * 0.1)


@functools.partial(jax.jit, static_argnames=("cfg",))
def sgd_update(params, grads, cfg: UpdateConfig = UpdateConfig()):
  m, n = params.shape
  spec = pl.BlockSpec((cfg.block_rows, n), lambda i: (i, 0))
  return pl.pallas_call(
      functools.partial(_update_kernel, cfg),
      out_shape=jax.ShapeDtypeStruct(params.shape, params.dtype),
      grid=(m // cfg.block_rows,),
      in_specs=[spec, spec],
      out_specs=spec,
  )(params, grads)


def target():
  p = jax.ShapeDtypeStruct((64, 256), jnp.float32)
  return sgd_update, (p, p), "tpu"
