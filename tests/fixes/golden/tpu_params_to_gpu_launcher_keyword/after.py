import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

N = 512


def checked_interpreter(races: bool):
  params = plgpu.InterpretGPUParams(detect_races=races, skip_floating_point_ops=False)
  return params


def _clip_body(x_ref, o_ref, *, bound):
  o_ref[...] = jnp.clip(x_ref[...], -bound, bound)


def clip(x, *, bound=1.0, interpret=False):
  return plgpu.kernel(
      functools.partial(_clip_body, bound=bound),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=interpret,
  )(x)


def _x():
  return jnp.linspace(-3.0, 3.0, N, dtype=jnp.float32)


def target():
  return functools.partial(clip, bound=2.0, interpret=checked_interpreter(races=True)), (_x(),), "interpret"


def expected():
  return np.clip(np.asarray(_x()), -2.0, 2.0)
