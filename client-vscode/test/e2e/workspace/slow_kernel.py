"""A module that takes ten minutes to import: its trace is there to be cancelled."""
import time

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

time.sleep(600)

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def copy(x_ref, o_ref):
  o_ref[...] = x_ref[...]


# pallas-lsp: trace(f32[128])
slow_copy = plgpu.kernel(copy, out_type=X)
