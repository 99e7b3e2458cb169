"""A stage config whose flag kind is a property (a BARRIER semaphore type), only signalled and waited on."""
# fix-rate: kind=regular_semaphore meaning=preserving
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class StageConfig:
    blocks: int = 2

    @property
    def flag_kind(self):
        return plgpu.SemaphoreType.BARRIER


class Stage:
    def __init__(self, cfg: StageConfig = StageConfig()):
        self.cfg = cfg

    def body(self, x_ref, o_ref):
        flag = pl.get_global(self.cfg.flag_kind)
        o_ref[...] = x_ref[...] - 2.0
        pl.semaphore_signal(flag)
        pl.semaphore_wait(flag)

    def __call__(self, x):
        return plgpu.kernel(self.body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(self.cfg.blocks,),
                            grid_names=("blocks",))(x)


def target():
    return Stage(), (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
