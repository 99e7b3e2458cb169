"""A get_global passed into an interpreted kernel that uses it only as a barrier: asked for in the body it would
be PAL002's (no get_global in interpret mode), and once the kernel runs compiled PAL006's (a barrier must be an
SMEM reference), so the move comes with both fixes in a row: run compiled, an SMEM barrier in scratch_types."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, sem_ref, o_ref):
  plgpu.barrier_arrive(sem_ref.at[1])
  plgpu.barrier_wait(sem_ref.at[1])
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(body, out_type=X, grid=(2,), grid_names=("x",), interpret=True)


@jax.jit
def run(x):
  sem = pl.get_global(plgpu.SemaphoreType.REGULAR((4,)))
  return kernel(x, sem)


def target():
  return run, (X,), "interpret"
