"""A TPU semaphore type kept in a module dict, asked for in a Mosaic GPU kernel and never used."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)
TYPES = {"sem": plgpu.SemaphoreType.REGULAR}  # one per kernel


def body(x_ref, o_ref):
  sem = pl.get_global(TYPES["sem"])
  o_ref[...] = x_ref[...] + 1.0


def target():
  return plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",)), (X,), "cuda"
