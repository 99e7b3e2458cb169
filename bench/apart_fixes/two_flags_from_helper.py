"""A single-block kernel that takes two flags from a shared helper module, one per phase."""
# fix-rate: kind=grid meaning=preserving

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from helpers import flags


def two_phase(a_ref, b_ref, out_ref):
  load_flag = flags.fresh_flag()
  store_flag = flags.fresh_flag()
  flags.pulse(load_flag)
  out_ref[...] = a_ref[...] - b_ref[...]
  flags.pulse(store_flag)


def target():
  io = jax.ShapeDtypeStruct((128,), jnp.float32)
  return plgpu.kernel(two_phase, out_type=io, num_threads=1, thread_name="wg"), (io, io), "cuda"
