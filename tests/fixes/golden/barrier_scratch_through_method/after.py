"""A loader class whose TMA copy gets its completion barrier from a method (`self._barrier()`), a global
semaphore passed positionally: the method takes the SMEM barrier from the body, which gets it in scratch_types.

(Before, `self` was counted as a parameter the call `self._barrier()` leaves out, and no fix was offered:
jax 0.12 'ValueError: barrier must be a SMEM reference, got Ref<gmem>{semaphore[]}'.)
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class Loader:
    width = 128

    def _barrier(self, barrier_ref):
        return barrier_ref

    def _body(self, x_gmem, o_gmem, tile, barrier_ref):
        done = self._barrier(barrier_ref)
        plgpu.copy_gmem_to_smem(x_gmem, tile, done)
        plgpu.barrier_wait(done)
        o_gmem[...] = tile[...] + 2.0

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                            scratch_types=[plgpu.SMEM((self.width,), jnp.float32),
                                           plgpu.Barrier()])(x)


def target():
    return Loader(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
