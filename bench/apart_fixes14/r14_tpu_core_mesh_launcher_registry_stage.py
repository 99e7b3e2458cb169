"""Copy-and-scale kernels for host-offloaded optimizer state, on a TensorCore mesh (Pallas TPU).

Launchers are kept in a registry of `functools.partial(pl.kernel, ...)` presets,
one per core layout; the bodies move HBM blocks through a VMEM stage by hand.
"""
# fix-rate: kind=scratch meaning=preserving

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 16, 256

LAUNCHERS = {
    "single_core": functools.partial(pl.kernel, mesh=pltpu.create_tensorcore_mesh("core", num_cores=1)),
}


def _scale_state_body(src_hbm, dst_hbm, *, factor: float):
  stage = pl.get_global(pltpu.VMEM((ROWS, COLS), jnp.float32))
  copy_sem = pl.get_global(pltpu.SemaphoreType.DMA)
  load = pltpu.make_async_copy(src_hbm, stage, copy_sem)
  load.start()
  load.wait()
  stage[...] = stage[...] * factor
  store = pltpu.make_async_copy(stage, dst_hbm, copy_sem)
  store.start()
  store.wait()


def scale_state(state: jax.Array, *, factor: float, layout: str = "single_core") -> jax.Array:
  launch = LAUNCHERS[layout](
      functools.partial(_scale_state_body, factor=factor),
      out_type=jax.ShapeDtypeStruct(state.shape, state.dtype),
  )
  return launch(state)


@jax.jit
def decay_moments(m: jax.Array) -> jax.Array:
  return scale_state(m, factor=0.9)


def target():
  return decay_moments, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), "tpu"


def adam_decay_step(m: jax.Array, v: jax.Array, *, b1: float = 0.9, b2: float = 0.999):
  """Decays both moments in place of a fused optimizer step (the update itself is XLA)."""
  return scale_state(m, factor=b1), scale_state(v, factor=b2)


if __name__ == "__main__":
  m = jnp.ones((ROWS, COLS), jnp.float32)
  v = jnp.full((ROWS, COLS), 2.0, jnp.float32)
  m2, v2 = jax.jit(adam_decay_step)(m, v)
  print(float(m2[0, 0]), float(v2[0, 0]))
