"""A copy kernel whose TMA barrier comes from a module-level helper object (`SYNC.acquire()`): the helper
method takes the SMEM barrier from the body, which gets it in scratch_types, written `SYNC.kind` at the launch.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class ArrivalSync:
    def __init__(self, arrivals=1):
        self.kind = plgpu.Barrier(num_arrivals=arrivals)
        self.barrier = None

    def acquire(self, barrier):
        self.barrier = barrier
        return self.barrier

    def wait(self):
        plgpu.barrier_wait(self.barrier)


SYNC = ArrivalSync()


def body(x_gmem, o_gmem, tile, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, tile, barrier=SYNC.acquire(barrier))
    SYNC.wait()
    o_gmem[...] = tile[...] + 1.0


def add_one(x):
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        scratch_types=[plgpu.SMEM((128,), jnp.float32), SYNC.kind])(x)


def target():
    return add_one, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
