"""Pipeline stages from a tuning table: the large entry needs more shared memory than an H200 has."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGES = {"small": 2, "large": 8}


def make(stages, block=128):
    def body(x_ref, o_ref, tiles, bars):
        o_ref[...] = x_ref[...]

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((block,), jnp.float32),
                        scratch_types=[plgpu.SMEM((stages, block, block), jnp.bfloat16),
                                       plgpu.Barrier(num_arrivals=1, num_barriers=stages)])


if __name__ == "__main__":
    x = jnp.ones((128,), jnp.float32)
    for name in ("small", "large"):
        make(STAGES[name])(x)
