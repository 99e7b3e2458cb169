"""A barrier asked of get_global in a lax.fori_loop body of a compiled pl.kernel (which takes no scratch),
whose last statement returns the carry: pl.run_scoped returns what its function returns, so the rest of the
loop body moves into that function and the body returns pl.run_scoped(...)."""
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  def step(i, carry):
    def scoped(ready):
      plgpu.barrier_arrive(ready)
      plgpu.barrier_wait(ready)
      return carry + 1.0
    return pl.run_scoped(scoped, plgpu.Barrier())
  total = lax.fori_loop(0, 2, step, 0.0)
  o_ref[...] = x_ref[...] + total


def target():
  kernel = pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("x",)))
  return kernel, (X,), "cuda"
