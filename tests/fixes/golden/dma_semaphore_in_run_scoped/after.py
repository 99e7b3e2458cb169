"""A halo copy through a scoped VMEM buffer and a scoped semaphore allocated REGULAR, in a kernel class's
method, run by the TPU interpreter."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


class HaloShift:
  rows = 8

  def body(self, x_hbm, o_ref):
    def staged(buffer, landed):
      copy = pltpu.make_async_copy(x_hbm.at[pl.ds(self.rows, self.rows)], buffer, landed)
      copy.start()
      copy.wait()
      o_ref[...] = buffer[...] + 1.0

    pl.run_scoped(
      staged, pltpu.VMEM((self.rows, 128), jnp.float32), pltpu.SemaphoreType.DMA
    )

  def __call__(self, x):
    return pl.pallas_call(
        self.body,
        out_shape=jax.ShapeDtypeStruct((self.rows, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        interpret=pltpu.InterpretParams(),
    )(x)


def _x():
  return np.arange(16 * 128, dtype=np.float32).reshape(16, 128)


def target():
  return HaloShift(), (jnp.asarray(_x()),), "interpret"


def expected():
  return _x()[8:] + 1.0
