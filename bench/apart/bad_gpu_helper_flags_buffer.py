"""Per-block completion flags kept in a scratch buffer from the helper module."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from apart_helpers.sync import scratch_flags

N = 128


@plgpu.kernel(out_type=jax.ShapeDtypeStruct((N,), jnp.float32), grid=(4,), grid_names=("i",))
def mark_done(x_ref, o_ref):
  flags = scratch_flags(4)
  o_ref[...] = x_ref[...]
  flags[jax.lax.axis_index("i")] = 1


def target():
  return mark_done, (jax.ShapeDtypeStruct((N,), jnp.float32),), "cuda"


if __name__ == "__main__":
  print(mark_done(jnp.ones((N,), jnp.float32)))
