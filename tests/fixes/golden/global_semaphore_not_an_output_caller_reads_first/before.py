"""A "done" flag declared as the last kernel output, whose callers read only the first result (`[0]`, through a
function returning the results): the flag becomes a global semaphore in the body, and `[0]` still reads the
array from the one-output tuple. (Where a caller unpacks both results, the fix is refused: see
test_fixes_not_offered.py.)
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class ScaleConfig:
    blocks: int = 2
    width: int = 128


def _scale(x_ref, o_ref, done_ref):
    o_ref[...] = x_ref[...] * 2.0
    pl.semaphore_signal(done_ref)


def _launch(x, cfg: ScaleConfig):
    kernel = plgpu.kernel(
        _scale,
        out_type=(jax.ShapeDtypeStruct(x.shape, x.dtype), plgpu.SemaphoreType.REGULAR),
        grid=(cfg.blocks,),
        grid_names=("blocks",),
    )
    return kernel(x)


def scale(x, cfg: ScaleConfig = ScaleConfig()):
    return _launch(x, cfg)[0]


def target():
    cfg = ScaleConfig()
    return scale, (jax.ShapeDtypeStruct((cfg.blocks * cfg.width,), jnp.float32),), "cuda"
