"""A TPU semaphore type star-imported from another module, in a Mosaic GPU kernel that signals and waits on it."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from flag_types import *

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  flag = pl.get_global(FLAG)
  pl.semaphore_signal(flag)
  pl.semaphore_wait(flag)
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))


def target():
  return kernel, (X,), "cuda"
