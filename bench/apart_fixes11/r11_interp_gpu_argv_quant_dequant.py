"""Int8 fake-quantisation round trip for a Hopper kernel, with a CPU fallback for tooling.

`python this_file.py --interpret` (or any run on a machine without a GPU) runs the Mosaic GPU
kernel under the GPU interpreter; the quantised values are staged in shared memory.
"""
# fix-rate: kind=scratch meaning=preserving

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

SIZE = 256
SCALE = 0.25


def _interpret_params():
  if "--interpret" in sys.argv or jax.default_backend() == "cpu":
    return plgpu.InterpretGPUParams()
  return False


def _fake_quant_body(x_ref, o_ref):
  q = pl.get_global(plgpu.SMEM((SIZE,), jnp.float32))
  q[...] = jnp.clip(jnp.round(x_ref[...] / SCALE), -128.0, 127.0)
  o_ref[...] = q[...] * SCALE


def fake_quant(x):
  return plgpu.kernel(
      _fake_quant_body,
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      interpret=_interpret_params(),
  )(x)


def _data():
  return np.linspace(-40.0, 40.0, SIZE, dtype=np.float32)


def target():
  return fake_quant, (jnp.asarray(_data()),), "interpret"


def expected():
  return np.clip(np.round(_data() / SCALE), -128.0, 127.0).astype(np.float32) * np.float32(SCALE)


if __name__ == "__main__":
  print(fake_quant(jnp.asarray(_data()))[:8])
