import dataclasses
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


@dataclasses.dataclass(frozen=True)
class Config:
    block: int = 8
    scale: float = 3.0


class ScaleKernel:
    def __init__(self, cfg: Config, interpret: bool = True):
        self.cfg = cfg
        self.interpret = interpret

    def _make_body(self):
        cfg = self.cfg

        def body(x_ref, o_ref):
            acc = pl.get_global(pltpu.VMEM((cfg.block, x_ref.shape[1]), jnp.float32))
            acc[...] = x_ref[...] * cfg.scale
            o_ref[...] = acc[...]

        return body

    def __call__(self, x):
        rows, cols = x.shape
        spec = pl.BlockSpec((self.cfg.block, cols), lambda i: (i, 0))
        return pl.pallas_call(self._make_body(), out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(rows // self.cfg.block,), in_specs=[spec], out_specs=spec,
                              interpret=self.interpret)(x)


def _inputs():
    return (jnp.ones((32, 128), jnp.float32),)


def expected():
    return np.full((32, 128), 3.0, np.float32)


def target():
    return ScaleKernel(Config()), _inputs(), "interpret"
