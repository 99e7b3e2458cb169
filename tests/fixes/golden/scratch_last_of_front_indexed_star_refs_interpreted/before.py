"""A body taking `*refs`, read from the front (`refs[0]`, `refs[1]`), fences two phases with a TPU semaphore
from get_global, in a pallas_call whose interpret= is decided at run time (interpreted on a CPU): the
semaphore becomes the last scratch ref, `refs[-1]`, which interpret mode and a TPU both run."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def _twice_kernel(*refs):
  x_ref, o_ref = refs[0], refs[1]
  fence = pl.get_global(pltpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] * 2.0
  pl.semaphore_signal(fence, 1)
  pl.semaphore_wait(fence, 1)
  o_ref[...] = o_ref[...] + 1.0


def twice_plus_one(x):
  return pl.pallas_call(_twice_kernel, out_shape=X, interpret=jax.default_backend() == "cpu")(x)


def _input():
  return jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)


def expected():
  return np.asarray(_input()) * 2.0 + 1.0


def target():
  return twice_plus_one, (_input(),), "interpret"
