"""A kernel class loading two tiles, each TMA copy completing on a global semaphore passed positionally."""
# fix-rate: kind=barrier_scratch meaning=preserving
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class AddConfig:
    width: int = 128


class Add:
    def __init__(self, cfg: AddConfig = AddConfig()):
        self.cfg = cfg

    def body(self, a_gmem, b_gmem, o_gmem, a_tile, b_tile):
        loaded = pl.get_global(plgpu.SemaphoreType.REGULAR)
        plgpu.copy_gmem_to_smem(a_gmem, a_tile, loaded)
        plgpu.barrier_wait(loaded)
        plgpu.copy_gmem_to_smem(b_gmem, b_tile, loaded)
        plgpu.barrier_wait(loaded)
        o_gmem[...] = a_tile[...] + b_tile[...]

    def __call__(self, a, b):
        tile = plgpu.SMEM((self.cfg.width,), jnp.float32)
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(a.shape, a.dtype),
                            scratch_types=[tile, tile])(a, b)


def target():
    x = jax.ShapeDtypeStruct((128,), jnp.float32)
    return Add(), (x, x), "cuda"
