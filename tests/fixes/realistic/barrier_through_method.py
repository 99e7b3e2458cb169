"""A loader class whose TMA copy gets its barrier from a method (self._barrier()), passed positionally."""
# fix-rate: kind=barrier_scratch meaning=preserving
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


class Loader:
    width = 128

    def _barrier(self):
        return pl.get_global(plgpu.SemaphoreType.REGULAR)

    def _body(self, x_gmem, o_gmem, tile):
        done = self._barrier()
        plgpu.copy_gmem_to_smem(x_gmem, tile, done)
        plgpu.barrier_wait(done)
        o_gmem[...] = tile[...] + 2.0

    def __call__(self, x):
        return plgpu.kernel(self._body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                            scratch_types=[plgpu.SMEM((self.width,), jnp.float32)])(x)


def target():
    return Loader(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
