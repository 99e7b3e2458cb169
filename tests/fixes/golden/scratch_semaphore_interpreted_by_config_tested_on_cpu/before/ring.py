"""A kernel class whose config says whether it runs interpreted (a test runs it so, on the CPU: test_ring.py):
"Run the kernel compiled" would drop `interpret=cfg.interpret`, and the test would fail (jax 0.12: 'Only
interpret mode is supported on CPU backend'), so the semaphore becomes scratch instead, which the interpreter
runs and the test passes with.
"""
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class RingConfig:
    blocks: int = 2
    width: int = 128
    interpret: bool = True


class RingScale:
    def __init__(self, config: RingConfig = RingConfig()):
        self.config = config

    def _body(self, x_ref, o_ref):
        arrived = pl.get_global(plgpu.SemaphoreType.REGULAR)
        o_ref[...] = x_ref[...] * 2.0
        pl.semaphore_signal(arrived)
        pl.semaphore_wait(arrived)

    def __call__(self, x):
        cfg = self.config
        kernel = plgpu.kernel(
            self._body,
            out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(cfg.blocks,),
            grid_names=("blocks",),
            interpret=cfg.interpret,
        )
        return kernel(x)


def target():
    cfg = RingConfig(interpret=True)
    return RingScale(cfg), (jnp.ones((cfg.blocks * cfg.width,), jnp.float32),), "interpret"


def expected():
    return jnp.full((256,), 2.0, jnp.float32)
