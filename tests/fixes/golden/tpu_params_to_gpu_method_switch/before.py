import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class GateConfig:
  width: int = 256
  debug: bool = True

  def interpreter(self):
    return pltpu.InterpretParams(detect_races=True) if self.debug else False


class ReluGate:

  def __init__(self, config: GateConfig):
    self.config = config

  def _body(self, x_ref, g_ref, o_ref, staged):
    staged[...] = x_ref[...] * jnp.maximum(g_ref[...], 0.0)
    o_ref[...] = staged[...]

  def __call__(self, x, g):
    return plgpu.kernel(
        self._body,
        out_type=jax.ShapeDtypeStruct((self.config.width,), jnp.float32),
        scratch_types=[plgpu.SMEM((self.config.width,), jnp.float32)],
        interpret=self.config.interpreter(),
    )(x, g)


GATE = ReluGate(GateConfig())


def _args():
  x = jnp.linspace(-2.0, 2.0, 256, dtype=jnp.float32)
  return x, -x


def target():
  return GATE, _args(), "interpret"


def expected():
  x, g = (np.asarray(a) for a in _args())
  return x * np.maximum(g, 0.0)
