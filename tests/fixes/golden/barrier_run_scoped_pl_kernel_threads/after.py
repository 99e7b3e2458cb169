"""A compiled pl.kernel whose two warpgroups meet at a "barrier" the body took from get_global."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def scoped(ready):
    plgpu.barrier_arrive(ready)
    plgpu.barrier_wait(ready)
    o_ref[...] = x_ref[...] + 1.0
  pl.run_scoped(scoped, plgpu.Barrier(num_arrivals=2), collective_axes="wg")


kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(num_threads=2, thread_name="wg"))


def target():
  return kernel, (X,), "cuda"
