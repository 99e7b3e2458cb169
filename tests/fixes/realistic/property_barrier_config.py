"""A TMA load whose completion barrier type is a property of the pipeline config (a plgpu.Barrier)."""
# fix-rate: kind=scratch meaning=preserving
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    width: int = 128
    arrivals: int = 1

    @property
    def barrier(self):
        return plgpu.Barrier(num_arrivals=self.arrivals)


def load_and_scale(x, cfg: PipelineConfig = PipelineConfig()):
    def body(x_gmem, o_gmem, tile):
        done = pl.get_global(cfg.barrier)
        plgpu.copy_gmem_to_smem(x_gmem, tile, done)
        plgpu.barrier_wait(done)
        o_gmem[...] = tile[...] * 4.0

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        scratch_types=[plgpu.SMEM((cfg.width,), jnp.float32)])(x)


def target():
    return load_and_scale, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
