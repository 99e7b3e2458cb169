"""A copy kernel whose TMA barrier comes from a helper object the kernel class holds (`self.sync.take()`):
the helper method takes the SMEM barrier from the body, which gets it in scratch_types, written at the
launch as the helper's own type (`self.sync.barrier_type`).

(Before, the barrier was allocated with pl.run_scoped inside the helper and returned out of its scope: jax 0.12
"AttributeError: 'NoneType' object has no attribute 'physical_element_aval'".)
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class CopySync:
    def __init__(self, arrivals=1):
        self.barrier_type = plgpu.Barrier(num_arrivals=arrivals)

    def take(self, scratch_ref):
        return scratch_ref


class Doubler:
    def __init__(self, width=128):
        self.width = width
        self.sync = CopySync()

    def body(self, x_gmem, o_gmem, tile, scratch_ref):
        barrier = self.sync.take(scratch_ref)
        plgpu.copy_gmem_to_smem(x_gmem, tile, barrier)
        plgpu.barrier_wait(barrier)
        o_gmem[...] = tile[...] * 2.0

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                            scratch_types=[plgpu.SMEM((self.width,), jnp.float32),
                                           self.sync.barrier_type])(x)


def target():
    return Doubler(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
