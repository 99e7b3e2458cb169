"""Per-core HBM -> VMEM -> HBM rescale on a TensorCore mesh (Pallas TPU).

``rescale`` is a ``pl.kernel`` over ``pltpu.create_tensorcore_mesh``: the core
DMAs the input into VMEM, multiplies it by the dequantisation scale and DMAs it
back. The interpreter is used when ``PALLAS_INTERPRET`` says so; it defaults to
on for hosts without a TPU, which is how the quantisation unit tests run.
"""

# fix-rate: kind=scratch meaning=preserving

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SCALE = 0.125


def interpret_mode():
  default = "0" if jax.default_backend() == "tpu" else "1"
  if os.environ.get("PALLAS_INTERPRET", default) == "1":
    return pltpu.InterpretParams(dma_execution_mode="eager")
  return False


def _rescale_body(x_hbm, o_hbm, *, scale: float):
  tile = pl.get_global(pltpu.VMEM(x_hbm.shape, x_hbm.dtype))
  sem = pl.get_global(pltpu.SemaphoreType.DMA)
  load = pltpu.make_async_copy(x_hbm, tile, sem)
  load.start()
  load.wait()
  tile[...] = tile[...] * scale
  store = pltpu.make_async_copy(tile, o_hbm, sem)
  store.start()
  store.wait()


@functools.cache
def _mesh():
  return pltpu.create_tensorcore_mesh("core", num_cores=1)


def rescale(x, *, scale: float = SCALE, interpret=None):
  if interpret is None:
    interpret = interpret_mode()
  return pl.kernel(
      functools.partial(_rescale_body, scale=scale),
      out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
      mesh=_mesh(),
      interpret=interpret,
  )(x)


def _inputs():
  return jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128)


def target():
  return functools.partial(rescale, interpret=pltpu.InterpretParams(dma_execution_mode="eager")), (_inputs(),), "interpret"


def expected():
  return np.arange(16 * 128, dtype=np.float32).reshape(16, 128) * SCALE


if __name__ == "__main__":
  print(np.array_equal(np.asarray(jax.jit(rescale)(_inputs())), expected()))
