"""PAL028: a helper a pl.kernel over a plgpu.Mesh runs asks plgpu.alloc_semaphore((2,)) for its flags, inside the
kernel ("Unimplemented primitive in Pallas Mosaic GPU lowering: to_edtype")."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((2, 128), jnp.float32)


def phase_flags():
  return plgpu.alloc_semaphore((2,))


def body(x_ref, o_ref):
  flags = phase_flags()
  b = jax.lax.axis_index("rows")
  o_ref[b] = x_ref[b] + 1.0
  pl.semaphore_signal(flags.at[b])
  pl.semaphore_wait(flags.at[b])


def run(x):
  return pl.kernel(body, out_type=X, mesh=plgpu.Mesh(grid=(2,), grid_names=("rows",)))(x)


def target():
  return run, (X,), "cuda"
