"""Unit test style: force the GPU interpreter around a semaphore kernel."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _kernel(x_ref, o_ref):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR((2,)))
  pl.semaphore_signal(sem.at[0])
  pl.semaphore_wait(sem.at[0], 1)
  o_ref[...] = x_ref[...] * x_ref[...]


def square(x):
  with plgpu.force_gpu_interpret_mode():
    return plgpu.kernel(_kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def target():
  return square, (jnp.ones((32,), jnp.float32),), "interpret"


def test_square():
  x = jnp.full((32,), 3.0, jnp.float32)
  assert jnp.allclose(jax.jit(square)(x), 9.0)


if __name__ == "__main__":
  test_square()
