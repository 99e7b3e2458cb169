"""A Triton pallas_call whose blocks count themselves on a global semaphore: Triton has none."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
  done = pl.get_global(plgpu.SemaphoreType.REGULAR)
  o_ref[...] = x_ref[...] + pl.program_id(0).astype(jnp.float32)
  pl.semaphore_signal(done)


def target():
  fn = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",), interpret=False)
  return jax.vmap(fn), (jax.ShapeDtypeStruct((3, 128), jnp.float32),), "triton"
