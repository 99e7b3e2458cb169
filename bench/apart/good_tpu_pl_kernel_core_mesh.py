"""A TPU kernel launched with pl.kernel on a TensorCore mesh; copies with a scoped DMA semaphore."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MODE = "tpu"


def _body(x_hbm, o_hbm):
  def scoped(sem):
    cp = pltpu.make_async_copy(x_hbm, o_hbm, sem)
    cp.start()
    cp.wait()

  pl.run_scoped(scoped, pltpu.SemaphoreType.DMA)


def copy(x):
  mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
  return pl.kernel(_body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)(x)


def target():
  return copy, (jax.ShapeDtypeStruct((8, 128), jnp.float32),), "tpu"


if __name__ == "__main__":
  print(copy(jnp.ones((8, 128), jnp.float32)))
