"""A copy-and-scale kernel with a GPU and a TPU path that share one helper for the completion semaphore.

`completion_semaphore(platform)` returns the semaphore kind each platform's copy waits on. The GPU
path fetches a global semaphore with `pl.get_global`, which is right there; the TPU path does the same
with a DMA semaphore, which the TPU TensorCore cannot lower.
"""
# fix-rate: kind=scratch meaning=preserving

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu

ROWS, COLS = 8, 128
SCALE = 4.0


def completion_semaphore(platform: str):
  """The semaphore type a copy completion is signalled on, per platform."""
  if platform == "tpu":
    return pltpu.SemaphoreType.DMA
  return plgpu.SemaphoreType.REGULAR


# --- GPU path: Mosaic GPU, a global semaphore orders the two halves of the body.
def gpu_body(x_ref, o_ref):
  done = pl.get_global(completion_semaphore("gpu"))
  o_ref[...] = x_ref[...] * SCALE
  pl.semaphore_signal(done)
  pl.semaphore_wait(done)


def scale_gpu(x):
  out = jax.ShapeDtypeStruct(x.shape, x.dtype)
  return plgpu.kernel(gpu_body, out_type=out)(x)


# --- TPU path: the input stays in HBM and is copied into the output block by a DMA.
def tpu_body(x_hbm, o_ref):
  done = pl.get_global(completion_semaphore("tpu"))
  copy = pltpu.make_async_copy(x_hbm, o_ref, done)
  copy.start()
  copy.wait()
  o_ref[...] = o_ref[...] * SCALE


def scale_tpu(x):
  return pl.pallas_call(
      tpu_body,
      in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
      out_specs=pl.BlockSpec((ROWS, COLS), lambda: (0, 0)),
      out_shape=jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),
  )(x)


SCALERS = {"gpu": scale_gpu, "tpu": scale_tpu}


def target():
  return SCALERS["tpu"], (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), "tpu"


if __name__ == "__main__":
  platform = jax.default_backend()
  x = jnp.ones((ROWS, COLS), jnp.float32)
  fn = SCALERS.get(platform)
  if fn is None:
    print("no kernel for", platform)
  else:
    np.testing.assert_array_equal(jax.jit(fn)(x), np.full((ROWS, COLS), SCALE, np.float32))
    print(platform, "ok")
