"""A two-phase kernel whose config decides interpret mode; its test runs it on the CPU."""
# fix-rate: kind=interpret meaning=preserving
import dataclasses

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class PhaseConfig:
    width: int = 128
    interpret: bool = False


def two_phase(x, cfg: PhaseConfig = PhaseConfig()):
    def body(x_ref, o_ref):
        ready = pl.get_global(plgpu.SemaphoreType.REGULAR)
        o_ref[...] = x_ref[...] + 1.0
        pl.semaphore_signal(ready)
        pl.semaphore_wait(ready)
        o_ref[...] = o_ref[...] * 2.0

    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=cfg.interpret)(x)


def target():
    cfg = PhaseConfig(interpret=True)
    return (lambda x: two_phase(x, cfg)), (jnp.ones((128,), jnp.float32),), "interpret"


def expected():
    return jnp.full((128,), 4.0, jnp.float32)
