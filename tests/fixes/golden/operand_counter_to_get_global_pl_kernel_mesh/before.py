"""A pl.kernel over a Mosaic GPU mesh takes its arrival counter as the first operand."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 128), jnp.float32)


def body(count_ref, x_ref, o_ref):
  """Each block doubles its row, then reports."""
  b = jax.lax.axis_index("b")
  o_ref[b] = x_ref[b] * 2.0
  pl.semaphore_signal(count_ref)
  pl.semaphore_wait(count_ref)


def run(x):
  count = jnp.zeros((), jnp.int32)
  return pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("b",)))(count, x)


def target():
  return run, (X,), "cuda"
