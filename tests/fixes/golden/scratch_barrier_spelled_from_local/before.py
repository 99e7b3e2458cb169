"""An SMEM barrier type held in a local variable: the launch cannot see the variable, so the scratch
type is spelled from its value."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  kind = plgpu.Barrier(num_arrivals=1)
  barrier = pl.get_global(kind)
  plgpu.barrier_arrive(barrier)
  plgpu.barrier_wait(barrier)
  o_ref[...] = x_ref[...] + 1.0


def target():
  kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",))
  return kernel, (X,), "cuda"
