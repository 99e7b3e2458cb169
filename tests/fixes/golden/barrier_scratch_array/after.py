"""An array of "barriers" from get_global, one of them arrived on and waited for by each block."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref, stages_ref):
  plgpu.barrier_arrive(stages_ref.at[1, 2])
  plgpu.barrier_wait(stages_ref.at[1, 2])
  o_ref[...] = x_ref[...] + 1.0


kernel = plgpu.kernel(
  body,
  out_type=X,
  grid=(2,),
  grid_names=("x",),
  scratch_types=[plgpu.Barrier(num_barriers=(2, 3))],
)


def target():
  return kernel, (X,), "cuda"
