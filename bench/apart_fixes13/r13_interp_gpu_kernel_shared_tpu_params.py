"""Mosaic GPU residual scale checked on CPU with the team's shared interpreter settings.

`testing_interpret_params()` was written for the TPU kernel suite and is reused here so
every kernel test shares one place to turn on race detection and NaN-filled memory.
"""

# fix-rate: kind=interpret_params meaning=preserving

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def testing_interpret_params(detect_races: bool = False):
  return pltpu.InterpretParams(detect_races=detect_races, uninitialized_memory="nan")


@dataclasses.dataclass(frozen=True)
class ResidualScale:
  alpha: float = 0.5
  n: int = 256

  def _body(self, x_ref, r_ref, o_ref, acc):
    acc[...] = x_ref[...].astype(jnp.float32) * self.alpha
    acc[...] += r_ref[...].astype(jnp.float32)
    o_ref[...] = acc[...].astype(o_ref.dtype)

  def __call__(self, x, r, *, interpret=None):
    return plgpu.kernel(
        self._body,
        out_type=jax.ShapeDtypeStruct((self.n,), x.dtype),
        scratch_types=[plgpu.SMEM((self.n,), jnp.float32)],
        interpret=interpret,
    )(x, r)


OP = ResidualScale()


def _example():
  x = jnp.arange(256, dtype=jnp.float32) % 4
  return (x, jnp.ones((256,), jnp.float32))


def target():
  return functools.partial(OP, interpret=testing_interpret_params()), _example(), "interpret"


def expected():
  x, r = _example()
  return np.asarray(x) * 0.5 + np.asarray(r)


if __name__ == "__main__":
  print(jax.jit(target()[0])(*_example())[:4])
