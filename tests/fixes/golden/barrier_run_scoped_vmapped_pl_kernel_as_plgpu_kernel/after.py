"""A compiled pl.kernel run under jax.vmap whose two warpgroups meet at a "barrier" the body took from
get_global. jax 0.11 cannot batch the run_scoped a fix allocates the barrier with inside a pl.kernel,
so the fixed kernel is launched with plgpu.kernel, the same launch that jax.vmap batches with a grid axis."""
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


def target():
  kernel = plgpu.kernel(body, out_type=X, num_threads=2, thread_name="wg")
  return jax.vmap(kernel), (jax.ShapeDtypeStruct((2, 128), jnp.float32),), "cuda"
