"""A two-stage pipeline class: the caller allocates the ready semaphore and hands it to both stages."""
# fix-rate: clean

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class StageConfig:
  width: int = 256
  gain: float = 2.0
  offset: float = -1.0

  @property
  def row(self):
    return jax.ShapeDtypeStruct((self.width,), jnp.float32)


class TwoStagePipeline:
  def __init__(self, cfg: StageConfig):
    self.cfg = cfg

  def _stage_a_body(self, ready_ref, x_ref, y_ref):
    y_ref[...] = x_ref[...] * self.cfg.gain
    pl.semaphore_signal(ready_ref)

  def _stage_b_body(self, ready_ref, y_ref, z_ref):
    pl.semaphore_wait(ready_ref)
    z_ref[...] = y_ref[...] + self.cfg.offset

  def stage_a(self, ready, x):
    return plgpu.kernel(self._stage_a_body, out_type=self.cfg.row)(ready, x)

  def stage_b(self, ready, y):
    return plgpu.kernel(self._stage_b_body, out_type=self.cfg.row)(ready, y)

  def __call__(self, x):
    ready = plgpu.alloc_semaphore()
    y = self.stage_a(ready, x)
    return self.stage_b(ready, y)


def target():
  pipe = TwoStagePipeline(StageConfig())
  return pipe, (pipe.cfg.row,), "cuda"


if __name__ == "__main__":
  pipe = TwoStagePipeline(StageConfig())
  x = jnp.arange(pipe.cfg.width, dtype=jnp.float32)
  np.testing.assert_allclose(jax.jit(pipe)(x), np.asarray(x) * 2.0 - 1.0)
  print("pipeline ok")
