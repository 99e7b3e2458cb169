"""Clean: the config method's tile type given as scratch_types."""
# fix-rate: clean
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
    width: int = 128

    def staging(self):
        return plgpu.SMEM((self.width,), jnp.float32)


def scale(x, cfg: Config = Config()):
    def body(x_ref, o_ref, stage):
        stage[...] = x_ref[...] * 2.0
        o_ref[...] = stage[...]

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), scratch_types=[cfg.staging()])(x)


def target():
    return scale, (jax.ShapeDtypeStruct((128,), jnp.float32),), "cuda"
